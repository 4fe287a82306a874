import re

from django.contrib.syndication.views import Feed
from django.shortcuts import get_object_or_404
from django.utils.feedgenerator import Atom1Feed

from .models import Category, Listing

FEED_LENGTH = 50
# XML 1.0 cannot carry C0 control characters other than tab, newline and carriage return, and
# Django's feed writer raises on them: one such character pasted into a title in the admin
# (PDFs are full of them) would make the whole feed a server error. They show as nothing
# on a page anyway.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub("", text)


class CategoryFeed(Feed):
    feed_type = Atom1Feed

    def get_object(self, request, code: str) -> Category:
        return get_object_or_404(Category, code=code)

    def title(self, category: Category) -> str:
        return xml_text(f"{category.name} ({category.code}) · Peer Revenue")

    def subtitle(self, category: Category) -> str:
        code = xml_text(category.code)
        return f"New and cross-listed {code} papers from arXiv, typeset properly."

    def link(self, category: Category) -> str:
        return category.get_absolute_url()

    def items(self, category: Category):
        # The guid names the category: fetch it with the page, not once per entry.
        return Listing.objects.stream(category=category).select_related("category")[:FEED_LENGTH]

    def item_title(self, listing: Listing) -> str:
        return xml_text(listing.paper.title_text)

    def item_description(self, listing: Listing) -> str:
        return xml_text(listing.paper.abstract_html)

    def item_link(self, listing: Listing) -> str:
        return listing.paper.get_absolute_url()

    def item_guid(self, listing: Listing) -> str:
        return f"{listing.paper.arxiv_abs_url}#{listing.category.code}-{listing.date}"

    def item_author_name(self, listing: Listing) -> str:
        return xml_text(listing.paper.short_authors)

    def item_pubdate(self, listing: Listing):
        return listing.paper.updated_at or listing.paper.submitted_at

    def item_updateddate(self, listing: Listing):
        return listing.paper.updated_at

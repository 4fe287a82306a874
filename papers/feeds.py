import re

from django.contrib.syndication.views import Feed
from django.shortcuts import get_object_or_404
from django.utils.feedgenerator import Atom1Feed

from .calendar import announced_at
from .models import Category, Listing

FEED_LENGTH = 50
# XML 1.0 cannot carry C0 control characters other than tab, newline and carriage return, and
# Django's feed writer raises on them: one such character pasted into a title in the admin
# (PDFs are full of them) would make the whole feed a server error. They show as nothing
# on a page anyway.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# An entry must name an author (RFC 4287 §4.1.2) and the feed names none for it to inherit.
NO_AUTHOR = "Unknown author"


def xml_text(text: str) -> str:
    return _NOT_XML.sub("", text)


class PapersAtomFeed(Atom1Feed):
    """Atom with what Django's writer leaves out: one <author> per author, and a plain-text
    <summary> beside the typeset HTML <content> (feed readers show MathML as junk in a
    summary, but many render it in content)."""

    def add_item_elements(self, handler, item) -> None:
        super().add_item_elements(handler, item)
        for name in item["authors"] or [NO_AUTHOR]:
            handler.startElement("author", {})
            handler.addQuickElement("name", name)
            handler.endElement("author")
        handler.addQuickElement("summary", item["summary"], {"type": "text"})
        if item["content"]:
            handler.addQuickElement("content", item["content"], {"type": "html"})


class CategoryFeed(Feed):
    feed_type = PapersAtomFeed

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

    # Django reads None as "no description"; django-stubs has this return str only.
    def item_description(self, listing: Listing) -> None:  # type: ignore[override]
        # Written by PapersAtomFeed as a text summary and an HTML content element instead.
        return None

    def item_extra_kwargs(self, listing: Listing) -> dict:
        paper = listing.paper
        return {
            "authors": [xml_text(name) for name in paper.author_names if name.strip()],
            "summary": xml_text(paper.abstract_text),
            "content": xml_text(paper.abstract_html),
        }

    def item_link(self, listing: Listing) -> str:
        return listing.paper.get_absolute_url()

    def item_guid(self, listing: Listing) -> str:
        return f"{listing.paper.arxiv_abs_url}#{listing.category.code}-{listing.date}"

    def item_pubdate(self, listing: Listing):
        """When the paper was first submitted, or else when this listing was announced."""
        return listing.paper.submitted_at or announced_at(listing.date)

    def item_updateddate(self, listing: Listing):
        """Atom requires it on every entry: the current version's date, never before the
        entry's publication."""
        published = self.item_pubdate(listing)
        updated = listing.paper.updated_at
        return updated if updated is not None and updated > published else published

    def item_categories(self, listing: Listing) -> list[str]:
        return [xml_text(code) for code in listing.paper.categories if code]

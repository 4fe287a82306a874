"""Market terms next to paper search results: the terms a search names, and the listed terms
each result mentions. One query each, whatever the number of results."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from django import template
from django.db.models import Q

from ..models import Mention, Term

register = template.Library()

MAX_TERMS = 5


@register.simple_tag
def terms_matching(words: str) -> list[Term]:
    """Terms on the market whose phrase or an alias contains the words, as /market/ finds them."""
    words = (words or "").strip()
    if not words:
        return []
    return list(
        Term.objects.exclude(status=Term.Status.DELISTED)
        .filter(Q(phrase__icontains=words) | Q(aliases__icontains=words))
        .order_by("phrase")[:MAX_TERMS]
    )


@register.simple_tag
def attach_mentions(papers: Sequence) -> str:
    """Set ``mentioned_terms`` on each paper: the listed terms it mentions, by phrase."""
    found: dict[int, list[Term]] = defaultdict(list)
    mentions = (
        Mention.objects.filter(
            paper__in=[paper.pk for paper in papers], term__status=Term.Status.LISTED
        )
        .select_related("term")
        .order_by("term__phrase")
    )
    for mention in mentions:
        found[mention.paper_id].append(mention.term)
    for paper in papers:
        paper.mentioned_terms = found.get(paper.pk, [])
    return ""

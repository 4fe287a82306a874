"""The database side of paper search: the text search configuration and SQL functions that
migration 0005 creates, as expressions the model and papers.search share.

The index is built by PostgreSQL itself, from columns the ingest already writes (the typeset
title and abstract, the rendered author names), as a stored generated column. So no writer
(ingest, admin, retypeset, a bulk update) can forget to refresh it, and no Python runs per row.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.search import SearchQueryCombinable, SearchQueryField, SearchVector
from django.db.models import F, Func, TextField
from django.db.models.expressions import CombinedExpression

# `english` with accents folded (unaccent) before stemming, on both the documents and the
# queries: "Dagli" finds "Dağlı", "Schrodinger" finds "Schrödinger".
CONFIG = "english_unaccent"


class SearchText(Func):
    """Readable text of stored, typeset HTML: tags and the TeX annotations of formulas dropped,
    the formulas' symbols kept as words, entities decoded (``paper_search_text`` in SQL)."""

    function = "paper_search_text"
    output_field = TextField()


class CategoryCodes(Func):
    """A paper's categories as ``text[]`` (``paper_category_codes``, papers/sql/search.sql):
    the first column of the search index, beside the search vector and the title's words. In
    one GIN index they are intersected by the index itself, rarest entries first; as separate
    indexes PostgreSQL built a bitmap of every paper with a common word (300,000 of a million)
    to AND it with the category's, and as ``jsonb`` every candidate was rechecked, its search
    vector read."""

    function = "paper_category_codes"
    output_field = ArrayField(TextField())


class SearchNames(Func):
    """Accent-folded author names and title (``paper_search_names`` in SQL): the column the
    trigram fallback once compared with. Kept for migration 0008, which creates it."""

    function = "paper_search_names"
    output_field = TextField()


# As django-stubs' own SearchQuery: in the stubs the two bases' & and | disagree.
class WeightedQuery(SearchQueryCombinable, Func):  # type: ignore[misc]
    """A tsquery whose every lexeme must be found with the given weight: ``'lamport':B``
    matches Lamport among the authors only. The GIN index answers it like any tsquery, and
    nothing is copied per row (as ``ts_filter`` on the vector would)."""

    # Each quoted lexeme of the query's text form ('...', a quote inside doubled) gets the label.
    template = (
        "regexp_replace((%(expressions)s)::text, '''(?:[^'']|'''')*''', '\\&:%(weight)s', "
        "'g')::tsquery"
    )
    output_field = SearchQueryField()

    def __init__(self, query, *, weight: str) -> None:
        # One weight, or several ("AB": in the title or the authors).
        if not weight or set(weight) - set("ABCD"):
            raise ValueError(weight)
        super().__init__(query, weight=weight)
        # What combining it with another query (&, |) reads: "au:a au:b" starts with one.
        self.config = query.config


def search_vector() -> CombinedExpression:
    """Title weight A, authors B, abstract C: a title match ranks above an abstract match."""
    return (
        SearchVector(SearchText(F("title_html")), config=CONFIG, weight="A")
        + SearchVector("authors_text", config=CONFIG, weight="B")
        + SearchVector(SearchText(F("abstract_html")), config=CONFIG, weight="C")
    )


def title_vector() -> SearchVector:
    """The title's words alone, unweighted: what ``ti:`` looks up (the search index has this
    expression as a column, so a filter must spell it the same way)."""
    return SearchVector(SearchText(F("title_html")), config=CONFIG)

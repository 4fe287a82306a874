"""Paper search: what a reader types, parsed into a query, the QuerySets that answer it, and the
page of results with the matched words marked.

The modules, in the order a search flows through them:

* :mod:`.parse`: what the reader typed → a Query (free words, ``au:``/``ti:``/``abs:``/
  ``cat:`` parts, the form's filters); no database;
* :mod:`.query`: the QuerySets: matching papers, ranked, new for saved searches;
* :mod:`.similar`: when nothing matches, the words of names and titles most like the typed
  ones, by trigrams, and the papers that have them (misspellings: "Lamprt");
* :mod:`.words`: words as the search configuration reads them, in Python (accents folded,
  the Snowball stem, the readable text of stored HTML);
* :mod:`.marks`: the matched words in <mark>, and a snippet of where a long abstract matched;
* :mod:`.pages`: one page of results (capped count, pagination, the fallback), best or
  newest first;
* :mod:`.refusals`: a query the database will not run, as a message (``check_runs`` before a
  search is kept).

Other code imports the names below from ``papers.search``.
"""

from .marks import mark_html, mark_matches, mark_plain, mark_text
from .pages import MAX_COUNTED, NEWEST, RELEVANCE, RESULTS_PER_PAGE, SORTS, Results, results
from .parse import MAX_QUERY_LENGTH, Query, SearchError, arxiv_id_in, parse
from .query import (
    RECENT_PAPERS,
    condition,
    find_paper,
    has_lexemes,
    label_categories,
    matching,
    new_matches,
    ranked,
)
from .refusals import check_runs, refusals_as_messages

__all__ = [
    "MAX_COUNTED",
    "MAX_QUERY_LENGTH",
    "NEWEST",
    "RECENT_PAPERS",
    "RELEVANCE",
    "RESULTS_PER_PAGE",
    "SORTS",
    "Query",
    "Results",
    "SearchError",
    "arxiv_id_in",
    "check_runs",
    "condition",
    "find_paper",
    "has_lexemes",
    "label_categories",
    "mark_html",
    "mark_matches",
    "mark_plain",
    "mark_text",
    "matching",
    "new_matches",
    "parse",
    "ranked",
    "refusals_as_messages",
    "results",
]

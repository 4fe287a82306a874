"""What we ask the arXiv API, described with the `arxiv` package's `Search`.

The package's `Search`, `SortCriterion` and `SortOrder` name the API's query parameters and
their values; we send the request ourselves (see `papers.arxiv.client` for why not through
`arxiv.Client`), so the parameters are read from the search's public attributes.
"""

from __future__ import annotations

import datetime as dt

import arxiv


def submitted_between(*, category_code: str, since: dt.date, until: dt.date) -> arxiv.Search:
    """A category's submissions from `since` to `until` (inclusive), oldest first: the order in
    which their announcement dates never decrease, so a backfill can write day by day."""
    return arxiv.Search(
        query=(f"cat:{category_code} AND submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"),
        max_results=None,
        sort_by=arxiv.SortCriterion.SubmittedDate,
        sort_order=arxiv.SortOrder.Ascending,
    )


def by_ids(arxiv_ids: list[str]) -> arxiv.Search:
    """These papers, at their current versions."""
    return arxiv.Search(id_list=arxiv_ids, max_results=len(arxiv_ids))


def page_params(search: arxiv.Search, *, start: int, size: int) -> dict[str, str]:
    """The API parameters for one page of `search`."""
    params = {
        "start": str(start),
        "max_results": str(size),
        "sortBy": search.sort_by.value,
        "sortOrder": search.sort_order.value,
    }
    if search.query:
        params["search_query"] = search.query
    if search.id_list:
        params["id_list"] = ",".join(search.id_list)
    return params

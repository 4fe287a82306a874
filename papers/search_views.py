"""The search page: /search/?q=… with optional category and date filters."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from peerrevenue import keep
from peerrevenue.pagination import page_number

from . import search

DATE_MESSAGE = "Give the date as YYYY-MM-DD, e.g. 2026-11-02."
SORT_MESSAGE = "Sort by relevance or by date (newest first)."


class SearchForm(forms.Form):
    # No max_length here: papers.search.parse says what is wrong with a long search, and how.
    q = forms.CharField(required=False, label="Search papers")
    category = forms.CharField(required=False, max_length=40)
    since = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    until = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    sort = forms.ChoiceField(
        required=False,
        choices=list(search.SORTS.items()),
        error_messages={"invalid_choice": SORT_MESSAGE},
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in ("since", "until"):
            self.fields[name].error_messages["invalid"] = DATE_MESSAGE


@require_GET
def search_page(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    context: dict = {
        "form": form,
        "nav": "search",
        "q": request.GET.get("q", ""),
        "sorts": search.SORTS,
        "sort": search.RELEVANCE,
    }
    if not form.is_valid():
        context["errors"] = [error for errors in form.errors.values() for error in errors]
        return render(request, "papers/search.html", context, status=400)
    data = form.cleaned_data
    text = data["q"]
    context["sort"] = data["sort"] or search.RELEVANCE
    arxiv_id = search.arxiv_id_in(text)
    if arxiv_id:
        paper = search.find_paper(arxiv_id)
        if paper is not None:
            return redirect(paper)
        context["missing_id"] = arxiv_id
        return render(request, "papers/search.html", context)
    try:
        query = search.parse(
            text,
            categories=[data["category"]] if data["category"] else [],
            date_from=data["since"],
            date_to=data["until"],
        )
    except search.SearchError as exc:
        context["errors"] = [str(exc)]
        return render(request, "papers/search.html", context, status=400)
    if query.has_text or query.categories or query.date_from or query.date_to:
        try:
            with search.refusals_as_messages():
                results = search.results(query, page=page_number(request), sort=context["sort"])
        except search.SearchError as exc:
            context["errors"] = [str(exc)]
            return render(request, "papers/search.html", context, status=400)
        search.label_categories(results.page.object_list)
        context.update(query=query, results=results, page=results.page)
        # Each result is marked with this search's words: keep its pieces in this process only.
        keep.keep_in_process(request)
    return render(request, "papers/search.html", context)

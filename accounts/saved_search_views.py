"""/searches/: a reader's saved searches and the new papers that match them."""

from __future__ import annotations

import datetime as dt

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from papers import search
from papers.search import MAX_QUERY_LENGTH
from peerrevenue.ratelimit import refuse_if_too_many

from .saved_searches import (
    SavedSearch,
    SavedSearchError,
    latest_announcement,
    save_search,
    saved_search_matches,
)

# The page shows papers first announced in the last two weeks of announcements.
RECENT_DAYS = 14


class SaveSearchForm(forms.Form):
    query = forms.CharField(max_length=MAX_QUERY_LENGTH, label="Save a search")
    sort = forms.ChoiceField(
        required=False,
        choices=list(search.SORTS.items()),
        error_messages={"invalid_choice": "Sort a saved search by relevance or by date."},
    )


def _too_many_changes(request: HttpRequest) -> HttpResponse | None:
    # Saving and deleting share one count: either way a script could churn the table.
    return refuse_if_too_many(
        request,
        scope="saved-search",
        limit=settings.RATELIMIT_SAVED_SEARCHES_PER_WINDOW,
        done="saved or deleted a search",
        back=reverse("saved_searches"),
    )


@login_required
def saved_searches(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        if refused := _too_many_changes(request):
            return refused
        form = SaveSearchForm(request.POST)
        if form.is_valid():
            try:
                saved, created = save_search(
                    user=request.user,
                    text=form.cleaned_data["query"],
                    sort=form.cleaned_data["sort"] or search.RELEVANCE,
                )
            except SavedSearchError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(
                    request,
                    f"Saved “{saved.query}”: new papers that match it will come to you here, "
                    "in your stream and in your digest."
                    if created
                    else f"You had already saved “{saved.query}”; it is sorted by "
                    f"{search.SORTS[saved.sort].lower()}.",
                )
        else:
            for errors in form.errors.values():
                for error in errors:
                    # An ErrorList yields its messages as strings; django-stubs says they may
                    # be ValidationErrors too.
                    messages.error(request, str(error))
        return redirect("saved_searches")
    latest = latest_announcement() or timezone.localdate()
    since = latest - dt.timedelta(days=RECENT_DAYS - 1)
    user = request.user
    assert user.is_authenticated  # login_required
    not_run: str | None = None
    try:
        with search.refusals_as_messages():
            matches = saved_search_matches(user=user, since=since)
    except search.SearchError as exc:
        # A search the database will not run: the page still lists them all, to delete it.
        matches, not_run = [], str(exc)
    searches = list(SavedSearch.objects.filter(user=user))
    counts = {saved.pk: 0 for saved in searches}
    for match in matches:
        for saved in match.searches:
            counts[saved.pk] += 1
    for saved in searches:
        saved.new_matches = counts[saved.pk]
        saved.runnable()  # sets its problem, shown beside it
    context = {
        "searches": searches,
        "matches": matches,
        "refused": not_run,
        "since": since,
        "form": SaveSearchForm(),
        "nav": "searches",
    }
    return render(request, "accounts/saved_searches.html", context)


@require_POST
@login_required
def delete_saved_search(request: HttpRequest) -> HttpResponse:
    if refused := _too_many_changes(request):
        return refused
    # The id travels in the form, not the address: addresses never name a user's rows.
    try:
        pk = int(request.POST.get("search", ""))
    except ValueError:
        raise Http404("There is no such saved search.") from None
    saved = get_object_or_404(SavedSearch, pk=pk, user=request.user)
    saved.delete()
    messages.success(request, f"Deleted the saved search “{saved.query}”.")
    return redirect("saved_searches")

"""The reader's parts of kept pages, filled per request (``peerrevenue.keep`` holes).

- ``saved`` (argument: a paper's id and its arXiv id, then ``:replaced`` in a replacement's
  entry or ``:page`` on the paper's own page): the star. The arXiv id comes from the hole, so
  from the piece that shows the paper and is keyed by its stamp: an edited id is a new hole.
  For a signed-in reader a small form that saves or unsaves the paper (POST, CSRF, back to
  this page at the paper's entry, ``#<arxiv id>`` or ``#replaced-<arxiv id>`` as
  includes/paper_entry.html names it: no script needed); for anyone else a link to sign in
  that comes back there too. Both show how many readers saved the paper. Filled under the
  ``saves`` fact (any save moves it), the reader, their CSRF secret and the page's address, so
  a fill kept in this process is never another reader's or another page's. One query fills a
  page's stars.
- ``for-you``: the signed-in front page's section of the reader's stored recommendations, or,
  without any, how to start (or that they are coming) and what is hot this week.
- ``note`` (argument: a paper's id): the signed-in reader's private note on the paper and the
  form that writes it, under the ``notes`` fact (any note written), the reader and their CSRF
  secret; nothing for anyone else.
- ``similar`` (argument: a paper's id): the paper page's similar papers, as the worker stored
  them; a paper without a list yet asks the worker for one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from urllib.parse import quote

from django.core.cache import cache
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html

from peerrevenue import keep, replicas
from peerrevenue.queueing import send_from_request

from . import hot

FRONT_PAGE_PICKS = 5


class StarFill:
    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self.user_id = request.user.pk if request.user.is_authenticated else None
        self.rows: dict[str, tuple[int, bool]] = {}
        self.back = request.get_full_path()
        self._token: str | None = None

    @property
    def token(self) -> str:
        # One masked token for the page's thirty forms: masking draws random characters.
        if self._token is None:
            self._token = get_token(self.request)
        return self._token

    def prefetch(self, arguments: Iterable[str]) -> None:
        ids = {argument.partition(":")[0] for argument in arguments}
        wanted = [int(a) for a in ids if a.isdigit() and a not in self.rows]
        if not wanted:
            return
        with replicas.reading_connection().cursor() as cursor:
            cursor.execute(
                "SELECT p.id, count(s.id), coalesce(bool_or(s.user_id = %s), false)"
                " FROM papers_paper AS p LEFT JOIN library_savedpaper AS s ON s.paper_id = p.id"
                " WHERE p.id = ANY(%s) GROUP BY p.id",
                [self.user_id, wanted],
            )
            for pk, count, mine in cursor.fetchall():
                self.rows[str(pk)] = (count, mine)

    def __call__(self, argument: str) -> str:
        pk, _, rest = argument.partition(":")
        arxiv_id, _, where = rest.partition(":")
        if pk not in self.rows:
            self.prefetch([pk])
        found = self.rows.get(pk)
        if found is None or not arxiv_id:
            return ""
        count, mine = found
        back = self.back + _entry_fragment(arxiv_id, where)
        counted = (
            format_html(' <span class="star__count">{} save{}</span>', count, pluralize(count))
            if count
            else ""
        )
        if self.user_id is None:
            link = format_html(
                '<a class="{}" href="{}?next={}" title="Sign in to save papers to your library">'
                "☆ Save</a>",
                "star__button" if count else "star star__button",
                reverse("login"),
                quote(back, safe="/"),
            )
            # A link alone is the whole star (one element, not a paragraph around one: a list
            # page has one per paper); a count beside it needs the row.
            return format_html('<p class="star">{}{}</p>', link, counted) if count else link
        return format_html(
            '<form class="star" method="post" action="{}">'
            '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
            '<input type="hidden" name="next" value="{}">'
            '<input type="hidden" name="action" value="{}">'
            '<button type="submit" class="star__button" aria-pressed="{}" title="{}">{}</button>'
            "{}</form>",
            reverse("library:save", args=[arxiv_id]),
            self.token,
            back,
            "unsave" if mine else "save",
            "true" if mine else "false",
            "Remove from your library" if mine else "Save to your library",
            "★ Saved" if mine else "☆ Save",
            counted,
        )


def _entry_fragment(arxiv_id: str, where: str) -> str:
    """Where the reader is brought back to after pressing a star: its paper's entry in a list
    (the browser scrolls there), nothing on the paper's own page (the star is at its top)."""
    if where == "page":
        return ""
    return f"#replaced-{arxiv_id}" if where == "replaced" else f"#{arxiv_id}"


def saved_stars(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    facts = keep.facts_of(request)
    fill = StarFill(request)
    secret = request.META.get("CSRF_COOKIE") if fill.user_id is not None else None
    return (facts["saves"], fill.user_id, secret, fill.back), fill


def for_you(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    facts = keep.facts_of(request)
    user_id = request.user.pk if request.user.is_authenticated else None
    # A reader without picks sees what is hot instead: the stored lists are refreshed at most
    # every few minutes (library.hot), so the fill is made again on that clock.
    bucket = int(time.time() // hot.REFRESH_SECONDS)

    def fill(argument: str) -> str:
        if user_id is None:
            return ""
        from .recommended import for_you as picks_for

        found = picks_for(user_id=user_id, limit=FRONT_PAGE_PICKS)
        hottest = []
        if not found.picks:
            hot.refresh_soon()
            hottest = hot.hot_papers(period="week", limit=FRONT_PAGE_PICKS)
        return render_to_string("library/_for_you_section.html", {"found": found, "hot": hottest})

    return (facts["recommendations"], facts["saves"], bucket, user_id), fill


def similar(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    facts = keep.facts_of(request)

    def fill(argument: str) -> str:
        if not argument.isdigit():
            return ""
        from .recommended import similar_papers

        papers = similar_papers(paper_id=int(argument))
        if papers is None:
            _ask_for_similar(int(argument))
            papers = similar_papers(paper_id=int(argument))  # found already if tasks are eager
        return render_to_string(
            "library/_similar_section.html", {"papers": papers, "pending": papers is None}
        )

    return facts["recommendations"], fill


def _ask_for_similar(paper_id: int) -> None:
    from .tasks import find_similar

    # Once per paper and hour, however many readers open its page before the worker is done.
    if cache.add(f"library:similar-asked:{paper_id}", 1, timeout=3600):
        send_from_request(find_similar, args=(paper_id,), what="similar papers")


def note(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    facts = keep.facts_of(request)
    user_id = request.user.pk if request.user.is_authenticated else None
    secret = request.META.get("CSRF_COOKIE") if user_id is not None else None

    def fill(argument: str) -> str:
        if user_id is None or not argument.isdigit():
            return ""
        from papers.models import Paper

        from .notes import MAX_CHARACTERS, note_of

        arxiv_id = Paper.objects.filter(pk=int(argument)).values_list("arxiv_id", flat=True)
        return render_to_string(
            "library/_note_section.html",
            {
                "text": note_of(user_id=user_id, paper_id=int(argument)),
                "action": reverse("library:note", args=[next(iter(arxiv_id), "")]),
                "token": get_token(request),
                "most": MAX_CHARACTERS,
            },
        )

    return (facts["notes"], user_id, secret), fill

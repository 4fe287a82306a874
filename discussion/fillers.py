"""The discussion's parts of other apps' kept pages, filled per request (peerrevenue.keep
holes, as library/fillers.py fills its stars):

- ``thread`` (argument ``paper:ID``) and ``term-thread`` (``term:ID``): the discussion
  section. Its comments come kept under what the page shows (``threads.kept_page``); here
  go the reader's own parts (their votes, the forms with their CSRF token, edit and delete
  on their own comments while the window is open, follow), on a term's page each writer's
  holding, and the thread's count. Filled under the ``comments`` fact (any comment or vote
  anywhere), on a term's page the prices (holdings move with trades) and who may be named,
  the reader, their CSRF secret, the address and, for a signed-in reader, the minute (edit
  windows close by the clock); all but the count kept per reader and what the page shows.
- ``comments`` (argument ``paper:ID`` or ``term:ID``): "3 comments" on list pages, one query
  for a page's counts, filled under the ``comments`` and ``terms`` facts.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from urllib.parse import quote

from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

from authorship.verified import verified_author_ids_sql
from market import public_names
from peerrevenue import keep, replicas
from peerrevenue.db import prepared_rows

from . import rules, threads
from .models import Report, Thread
from .targets import Target


def _page_number(request: HttpRequest) -> int:
    raw = request.GET.get("comments", "1")
    return int(raw) if raw.isdigit() and len(raw) < 7 else 1


def thread(request: HttpRequest) -> tuple[object, Callable[[str], str | bytes]]:
    """A paper's thread: nothing in it moves with trades; its writers' author marks move with
    the claims (the every-page fact ``verified``, accounts/verified_authors.py)."""
    return _thread(request, market=(keep.facts_of(request)["verified"],))


def term_thread(request: HttpRequest) -> tuple[object, Callable[[str], str | bytes]]:
    """A term's thread: its writers' holdings move with the prices (any trade) and who may be
    named."""
    facts = keep.facts_of(request)
    return _thread(request, market=(facts["prices"], facts.values.get((public_names.FACT,))))


def _thread(request: HttpRequest, *, market: tuple) -> tuple[object, Callable[[str], str | bytes]]:
    facts = keep.facts_of(request)
    user = request.user if request.user.is_authenticated else None
    secret = request.META.get("CSRF_COOKIE") if user is not None else None
    path = request.get_full_path()
    minute = int(time.time() // 60) if user is not None else None
    version = (facts["comments"], *market, getattr(user, "pk", None), secret, path, minute)

    def fill(argument: str) -> str | bytes:
        target = Target.parse(argument)
        if target is None:
            return ""
        found, names, state, authors = _thread_and_reader(
            target=target, user_id=getattr(user, "pk", None)
        )
        kept = threads.kept_page(
            thread=found,
            names=names,
            page=_page_number(request),
            on_term=target.kind == "term",
            facts=facts,
        )
        shown_authors = sorted(authors.intersection(kept.writer_ids()))
        reader = (getattr(user, "pk", None), secret, minute, state.key() if user else None)
        parts = (kept.name, str(target), market, shown_authors, path, reader)
        # Kept in this process under all it shows but the count (the reader's votes and own
        # comments, the holdings' prices, the URL, the minute), as UTF-8: a comment elsewhere,
        # which moves the every-page ``comments`` fact, then joins three byte strings here
        # rather than the reader's controls under each of 250 comments, and encodes nothing.
        before, after = keep.get_or_make(
            keep.key("thread-filled", *parts),
            lambda: _encoded_pair(
                kept.join(
                    _reader_fills(
                        request, kept=kept, target=target, state=state, authors=authors, path=path
                    )
                )
            ),
            size=lambda pair: len(pair[0]) + len(pair[1]),
            shared=False,
        )
        count = found.comment_count if found is not None else 0
        shown = format_html('<span class="muted">· {} comment{}</span>', count, pluralize(count))
        return b"".join((before, shown.encode(), after))

    return version, fill


def _encoded_pair(pair: tuple[str, str]) -> tuple[bytes, bytes]:
    return pair[0].encode(), pair[1].encode()


def _reader_fills(
    request: HttpRequest,
    *,
    kept: threads.KeptThread,
    target: Target,
    state: ReaderState,
    authors: set[int],
    path: str,
) -> dict[tuple[str, str], str]:
    """What goes in the kept page's places for this reader, but the count."""
    fills: dict[tuple[str, str], str] = {}
    writers = kept.writer_ids()  # read from the page's places: once
    if target.kind == "term" and writers:
        fills.update(_holdings(term_id=target.pk, writer_ids=writers))
    elif target.kind == "paper" and writers:
        fills.update(_authors(authors=authors, writer_ids=writers))
    user = request.user
    if not user.is_authenticated:
        fills[("reader", "")] = _anonymous_part(target=target, path=path)
        return fills
    token = get_token(request)
    fills[("reader", "")] = _reader_part(
        target=target, state=state, token=token, path=path, user=user
    )
    controls = _Controls(target=target, state=state, token=token, path=path)
    for kind, comment_id in kept.comments():
        fills[(kind, str(comment_id))] = controls.of(comment_id, top=kind == "actions")
    return fills


class ReaderState:
    """What the reader did in the thread: their votes, their own comments (with the text of
    those they may still edit), whether they follow it, and a suspension's reason."""

    def __init__(self, voted, following, suspended, own) -> None:
        self.voted = set(voted or [])
        self.following = bool(following)
        self.suspended: str | None = suspended
        self.own = {int(pk): (body, editable) for pk, body, editable in own or []}

    def key(self) -> tuple[object, ...]:
        """All of it, for a key."""
        own = sorted(self.own.items())
        return (sorted(self.voted), self.following, self.suspended, own)


def _thread_and_reader(
    *, target: Target, user_id: int | None
) -> tuple[Thread | None, int, ReaderState, set[int]]:
    """The thread (its id, stamp and count), the traders stamp (a writer renamed), the
    reader's state in it and, on a paper's page, the paper's verified authors: one query,
    whatever the page shows."""
    window = int(rules.EDIT_WINDOW.total_seconds())
    authors = verified_author_ids_sql("%(pk)s") if target.kind == "paper" else "NULL"
    # Prepared (peerrevenue.db): Postgres plans its eight subqueries once a connection, not
    # on every page.
    [row] = prepared_rows(
        "SELECT t.id, t.stamp, t.comment_count,"
        " (SELECT value FROM kept_stamp WHERE name = 'traders'),"
        " (SELECT array_agg(v.comment_id) FROM discussion_vote AS v"
        "   JOIN discussion_comment AS c ON c.id = v.comment_id"
        "   WHERE v.user_id = %(user)s AND c.thread_id = t.id),"
        " EXISTS (SELECT 1 FROM discussion_follow AS f WHERE f.user_id = %(user)s"
        "   AND f.thread_id = t.id),"
        " (SELECT reason FROM discussion_suspension WHERE user_id = %(user)s"
        "   AND (until IS NULL OR until > now())),"
        " (SELECT json_agg(json_build_array(c.id, c.body,"
        "    c.created_at > now() - make_interval(secs => %(window)s)))"
        "   FROM discussion_comment AS c WHERE c.author_id = %(user)s"
        "   AND c.thread_id = t.id AND c.deleted_at IS NULL AND c.hidden_at IS NULL),"
        f" {authors}"
        " FROM (SELECT 1) AS one"  # noqa: S608 - the column is ours: paper_id or term_id
        f" LEFT JOIN discussion_thread AS t ON t.{target.column} = %(pk)s",
        {"user": user_id, "pk": target.pk, "window": window},
        using=replicas.reading_connection(),
    )
    thread_id, stamp, count, names, *state, author_ids = row
    found = None
    if thread_id is not None:
        found = Thread(pk=thread_id, stamp=stamp, comment_count=count)
        found.paper_id = target.pk if target.kind == "paper" else None
        found.term_id = target.pk if target.kind == "term" else None
    return found, names or 0, ReaderState(*state), set(author_ids or ())


def _hidden_fields(token: str, back: str) -> str:
    return format_html(
        '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
        '<input type="hidden" name="next" value="{}">',
        token,
        back,
    )


def _body_field(*, field_id: str, label: str, value: str = "") -> str:
    return format_html(
        '<label for="{id}">{label}</label>'
        '<textarea id="{id}" name="body" rows="4" maxlength="{most}" required'
        ' aria-describedby="{id}-help">{value}</textarea>'
        '<p class="help-text" id="{id}-help">Markdown: *emphasis*, `code`, [links](https://…),'
        " &gt; quotes, - lists; maths in $…$.</p>",
        id=field_id,
        label=label,
        most=rules.MAX_CHARACTERS,
        value=value,
    )


def _key_field(key: str | None = None) -> str:
    return format_html('<input type="hidden" name="key" value="{}">', key or uuid.uuid4().hex)


def _anonymous_part(*, target: Target, path: str) -> str:
    return format_html(
        '<p class="discussion__join"><a href="{}?next={}">Sign in</a> to comment, vote or'
        ' follow this discussion. <a href="{}">Atom feed</a></p>',
        reverse("login"),
        quote(path + "#discussion", safe="/"),
        reverse("discussion:feed", args=[str(target)]),
    )


def _reader_part(*, target: Target, state: ReaderState, token: str, path: str, user) -> str:
    return render_to_string(
        "discussion/_reader_part.html",
        {
            "target": str(target),
            "following": state.following,
            "suspended": state.suspended,
            "hidden": mark_safe(_hidden_fields(token, path + "#discussion")),  # noqa: S308
            "body_field": mark_safe(  # noqa: S308 - format_html escaped it
                _body_field(field_id="discussion-new", label="Add a comment")
            ),
            "key_field": mark_safe(_key_field()),  # noqa: S308
            "new_account": rules.is_new(user, now=timezone.now()),
            "rules": rules,
        },
    )


# Where a comment's id goes in the controls made once a request for every comment alike
# (``_Controls``): a private-use character, which nothing else in them can hold (the address
# comes percent-encoded from get_full_path, the rest is ours).
_ID = "\ue002"
# Where the reader's own comment's text goes in their edit form: put in escaped, last.
_BODY = "\ue003"
# A number for reverse(), whose patterns take digits, swapped for ``_ID`` in what it returns.
_ID_NUMBER = "2147483647"


def _with_id(name: str) -> str:
    return reverse(f"discussion:{name}", args=[_ID_NUMBER]).replace(_ID_NUMBER, _ID)


class _Controls:
    """The reader's controls under each comment of a page. Made per comment through
    format_html and reverse() they cost more than the rest of a 250-comment page, so the
    controls of another's comment (upvoted or not, top-level or a reply) are made once a
    request with ``_ID`` for the id, and each comment's are those texts joined around its
    id. The reader's own comments (edit and delete in place of vote and report) by shape
    too, their text put in the edit form after the id."""

    def __init__(self, *, target: Target, state: ReaderState, token: str, path: str) -> None:
        self.target = target
        self.state = state
        self.token = token
        self.path = path
        # A reply form's one-time key: unique per form, as a uuid each would be, for less.
        self.key = uuid.uuid4().hex[:16]
        self.texts: dict[tuple[object, ...], list[str]] = {}

    def of(self, comment_id: int, *, top: bool) -> str:
        own = self.state.own.get(comment_id)
        if own is not None:
            body, editable = own
            texts = self._texts(top=top, voted=False, own=(_BODY, editable))
            # The body last, once the id is in: nothing is looked for in it afterwards.
            joined = str(comment_id).join(texts).replace(_BODY, conditional_escape(body))
            return mark_safe(joined)  # noqa: S308 - escaped, an int put in
        texts = self._texts(top=top, voted=comment_id in self.state.voted, own=None)
        return mark_safe(str(comment_id).join(texts))  # noqa: S308 - escaped, an int put in

    def _texts(self, *, top: bool, voted: bool, own: tuple[str, bool] | None) -> list[str]:
        shape = (top, voted, own)
        texts = self.texts.get(shape)
        if texts is None:
            made = _actions(
                target=self.target,
                top=top,
                suspended=self.state.suspended is not None,
                token=self.token,
                path=self.path,
                key=f"{self.key}-{_ID}",
                voted=voted,
                own=own,
            )
            texts = self.texts[shape] = made.split(_ID)
        return texts


def _actions(
    *,
    target: Target,
    top: bool,
    suspended: bool,
    token: str,
    path: str,
    key: str,
    voted: bool,
    own: tuple[str, bool] | None,
) -> str:
    """The controls of one shape of comment, with ``_ID`` wherever its id goes; ``own``: the
    reader's own comment (its text to edit, whether it may still be edited)."""
    hidden = _hidden_fields(token, f"{path}#comment-{_ID}")
    parts: list[str] = []
    if own is None:
        parts.append(
            format_html(
                '<form method="post" action="{}">{}<input type="hidden" name="up" value="{}">'
                '<button type="submit" class="button button--quiet" aria-pressed="{}">{}</button>'
                "</form>",
                _with_id("vote"),
                hidden,
                "0" if voted else "1",
                "true" if voted else "false",
                "▲ Upvoted" if voted else "▲ Upvote",
            )
        )
    if top and not suspended:
        parts.append(
            format_html(
                '<details class="comment__more"><summary>Reply</summary>'
                '<form method="post" action="{}">{}{}'
                '<input type="hidden" name="target" value="{}">'
                '<input type="hidden" name="parent" value="{}">'
                '{}<button type="submit" class="button">Post reply</button></form></details>',
                reverse("discussion:post"),
                hidden,
                _key_field(key),
                target,
                _ID,
                _body_field(field_id=f"reply-{_ID}", label="Your reply"),
            )
        )
    if own is not None:
        body, editable = own
        if editable and not suspended:
            parts.append(
                format_html(
                    '<details class="comment__more"><summary>Edit</summary>'
                    '<form method="post" action="{}">{}{}'
                    '<button type="submit" class="button">Save</button></form></details>',
                    _with_id("edit"),
                    hidden,
                    _body_field(field_id=f"edit-{_ID}", label="Your comment", value=body),
                )
            )
        parts.append(
            format_html(
                '<form method="post" action="{}">{}'
                '<button type="submit" class="button button--quiet">Delete</button></form>',
                _with_id("delete"),
                hidden,
            )
        )
    else:
        parts.append(
            format_html(
                '<details class="comment__more"><summary>Report</summary>'
                '<form method="post" action="{action}">{hidden}'
                '<label for="report-{id}">Why?</label>'
                '<select id="report-{id}" name="reason">{options}</select>'
                '<label for="report-details-{id}">Anything the curators should know'
                " (optional)</label>"
                '<input type="text" id="report-details-{id}" name="details" maxlength="500">'
                '<button type="submit" class="button">Send report</button></form></details>',
                action=_with_id("report"),
                hidden=hidden,
                id=_ID,
                options=format_html_join_options(Report.Reason.choices),
            )
        )
    return format_html('<div class="comment__actions">{}</div>', mark_safe("".join(parts)))  # noqa: S308


def format_html_join_options(choices: Iterable[tuple[str, str]]) -> str:
    return mark_safe(  # noqa: S308 - each option escaped by format_html
        "".join(
            format_html('<option value="{}">{}</option>', value, label) for value, label in choices
        )
    )


def _holdings(*, term_id: int, writer_ids: list[int]) -> dict[tuple[str, str], str]:
    """What each writer holds of the term, beside their name; traders who keep their page
    private are not shown holding anything."""
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            "SELECT a.user_id, h.shares FROM market_holding AS h"
            " JOIN market_account AS a ON a.id = h.account_id"
            " WHERE h.term_id = %s AND h.shares > 0 AND a.user_id = ANY(%s)"  # noqa: S608
            f" AND a.user_id NOT IN ({public_names.private_sql()})",
            [term_id, writer_ids],
        )
        return {
            ("holds", str(user_id)): format_html(
                ' <span class="comment__holds">holds {}</span>', f"{shares:,}"
            )
            for user_id, shares in cursor.fetchall()
        }


def _authors(*, authors: set[int], writer_ids: list[int]) -> dict[tuple[str, str], str]:
    """The paper's verified authors among the writers, marked beside their names."""
    return {
        ("author", str(user_id)): mark_safe(  # noqa: S308 - a constant
            ' <span class="badge badge--verified" title="A curator verified this reader'
            ' as an author of the paper">author</span>'
        )
        for user_id in writer_ids
        if user_id in authors
    }


class CountFill:
    def __init__(self) -> None:
        self.rows: dict[str, tuple[int, str]] = {}
        self.asked: set[str] = set()

    def prefetch(self, arguments: Iterable[str]) -> None:
        parsed = (Target.parse(argument.partition(" ")[0]) for argument in arguments)
        targets = [t for t in parsed if t and str(t) not in self.asked]
        if not targets:
            return
        self.asked.update(map(str, targets))
        papers = [t.pk for t in targets if t.kind == "paper"]
        terms = [t.pk for t in targets if t.kind == "term"]
        with replicas.reading_connection().cursor() as cursor:
            cursor.execute(
                "SELECT t.paper_id, t.term_id, t.comment_count, p.arxiv_id, m.slug"
                " FROM discussion_thread AS t"
                " LEFT JOIN papers_paper AS p ON p.id = t.paper_id"
                " LEFT JOIN market_term AS m ON m.id = t.term_id"
                " WHERE (t.paper_id = ANY(%s) OR t.term_id = ANY(%s)) AND t.comment_count > 0",
                [papers, terms],
            )
            for paper_id, term_id, count, arxiv_id, slug in cursor.fetchall():
                if paper_id is not None:
                    url = reverse("papers:paper", args=[arxiv_id])
                    self.rows[f"paper:{paper_id}"] = (count, url)
                else:
                    self.rows[f"term:{term_id}"] = (count, reverse("market:term", args=[slug]))

    def __call__(self, argument: str) -> str:
        # "paper:PK ARXIV_ID": the id comes from the kept entry around the hole (keyed by the
        # paper's stamp), so an edited id shows at once although these counts are not keyed by
        # papers.
        argument, _, arxiv_id = argument.partition(" ")
        if argument not in self.asked:
            self.prefetch([argument])
        found = self.rows.get(argument)
        if found is None:
            return ""
        count, url = found
        if arxiv_id:
            url = reverse("papers:paper", args=[arxiv_id])
        return format_html(
            '<a class="comments-count" href="{}#discussion">{} comment{}</a>',
            url,
            f"{count:,}",
            pluralize(count),
        )


def counts(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    facts = keep.facts_of(request)
    return (facts["comments"], facts["terms"]), CountFill()

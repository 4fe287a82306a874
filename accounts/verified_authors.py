"""A paper's verified authors on its page: the readers whose claim to it a curator approved
(authorship), each linked to their trader page where it is public; a reader who keeps their
page private is counted, not named, as on the market's public pages.

The ``verified`` hole (argument: a paper's id) is filled per request under the ``verified``
fact, the claims and traders stamps together: an approval, a withdrawal, a rename or a page
made private moves it (authorship/sql/stamps.sql, accounts/sql/stamps.sql). Every page reads
it, so a whole anonymous page kept under its facts is never one with an old badge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string

from authorship.models import Claim
from peerrevenue import keep, replicas

from .models import Preferences

FACT = "verified"
FACT_SQL = (
    "SELECT string_agg(value::text, ':' ORDER BY name) FROM kept_stamp"
    " WHERE name IN ('claims', 'traders')"
)


@dataclass(frozen=True, slots=True)
class Author:
    username: str
    public: bool


class VerifiedFill:
    def __init__(self) -> None:
        self.authors: dict[str, list[Author]] = {}

    def prefetch(self, arguments: Iterable[str]) -> None:
        wanted = [int(a) for a in set(arguments) if a.isdigit() and a not in self.authors]
        if not wanted:
            return
        for argument in wanted:
            self.authors[str(argument)] = []
        with replicas.reading_connection().cursor() as cursor:
            # In the order they were approved: the first verified author first.
            cursor.execute(
                f"SELECT c.paper_id, u.username, coalesce(p.public_trader_page, true)"
                f" FROM {Claim._meta.db_table} AS c JOIN auth_user AS u ON u.id = c.user_id"
                f" LEFT JOIN {Preferences._meta.db_table} AS p ON p.user_id = c.user_id"
                " WHERE c.status = %s AND c.paper_id = ANY(%s)"
                " ORDER BY c.paper_id, c.decided_at NULLS LAST, c.id",
                [Claim.Status.APPROVED, wanted],
            )
            for paper_id, username, public in cursor.fetchall():
                self.authors[str(paper_id)].append(Author(username, public))

    def __call__(self, argument: str) -> str:
        if argument not in self.authors:
            self.prefetch([argument])
        authors = self.authors.get(argument) or []
        if not authors:
            return ""
        named = [author for author in authors if author.public]
        return render_to_string(
            "authorship/_verified_authors.html",
            {"named": named, "private": len(authors) - len(named), "count": len(authors)},
        )


def verified_badges(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    return keep.facts_of(request)[FACT], VerifiedFill()

"""When PostgreSQL refuses to run a search: the refusal as a SearchError the reader can read,
and a check that a query will run before it is kept (saved searches).

``parse`` bounds what is known to overflow ``websearch_to_tsquery`` (runs of NOTs: see
``bounded_negations``), so this is the second wall: a limit of the text search or of the
regular expressions that rank phrases, met by some input nobody has thought of, is a message
on the page, never a server error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.db import DatabaseError, transaction

from peerrevenue import replicas

from .. import fulltext
from .parse import Query, SearchError

# SQLSTATEs of a query PostgreSQL will not run as given: a limit of the program (54: a word,
# a query or the stack too big), an invalid regular expression (2201B). "tsquery stack too
# small" comes as an internal error (XX000), told by its words from others of that code.
_LIMITS = ("54",)
_INVALID_REGEX = "2201B"
_INTERNAL = "XX000"


def _is_refusal(exc: DatabaseError) -> bool:
    cause = exc.__cause__
    code = getattr(cause, "sqlstate", None) or ""
    if code.startswith(_LIMITS) or code == _INVALID_REGEX:
        return True
    return code == _INTERNAL and "tsquery" in str(exc)


def message_for(exc: DatabaseError) -> str:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (
        f"This search could not be run: {reason}. Use fewer operators (-, quotes, or) and "
        "search again."
    )


@contextlib.contextmanager
def refusals_as_messages() -> Iterator[None]:
    """Run the search queries of the block; a refusal of the database raises SearchError.

    Inside a transaction (a test, a view that writes) the block runs in a savepoint, so that
    the refusal leaves the transaction usable; outside one a failed statement costs nothing.
    """
    connection = replicas.reading_connection()
    savepoint = (
        transaction.atomic(using=connection.alias)
        if connection.in_atomic_block
        else contextlib.nullcontext()
    )
    try:
        with savepoint:
            yield
    except DatabaseError as exc:
        if not _is_refusal(exc):
            raise
        raise SearchError(message_for(exc)) from None


def check_runs(query: Query) -> None:
    """Raise SearchError if PostgreSQL would refuse any text part of the query: one round trip,
    for what is about to be kept and run again on every visit."""
    parts = [text for text, _weight in query.text_parts()]
    if not parts:
        return
    selects = ", ".join(["websearch_to_tsquery(%s::regconfig, %s)::text"] * len(parts))
    params: list[str] = []
    for text in parts:
        params += [fulltext.CONFIG, text]
    with refusals_as_messages(), replicas.reading_connection().cursor() as cursor:
        cursor.execute(f"SELECT {selects}", params)  # noqa: S608 - placeholders only
        cursor.fetchone()

"""A reader's private notes on papers: one per paper, written and cleared by its reader only."""

from __future__ import annotations

from collections.abc import Iterable

from papers.models import Paper

from .models import Note

MAX_CHARACTERS = 5_000


class NoteError(Exception):
    """A note refused, with what to tell the reader."""


def write(*, user, paper: Paper, text: str) -> Note | None:
    """Store the reader's note on ``paper`` (an empty text removes it)."""
    text = text.replace("\x00", "").strip()
    if len(text) > MAX_CHARACTERS:
        raise NoteError(
            f"A note may be at most {MAX_CHARACTERS:,} characters; this one has {len(text):,}."
            " Nothing was saved."
        )
    if not text:
        Note.objects.filter(user=user, paper=paper).delete()
        return None
    note, _ = Note.objects.update_or_create(user=user, paper=paper, defaults={"text": text})
    return note


def note_of(*, user_id: int, paper_id: int) -> str:
    found = Note.objects.filter(user_id=user_id, paper_id=paper_id).values_list("text", flat=True)
    return next(iter(found), "")


def notes_of(*, user, papers: Iterable[Paper]) -> dict[int, str]:
    """The reader's notes on ``papers``, by paper id (one query, for an export)."""
    ids = [paper.pk for paper in papers]
    return dict(Note.objects.filter(user=user, paper_id__in=ids).values_list("paper_id", "text"))

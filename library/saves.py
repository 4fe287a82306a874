"""A reader's library: save and unsave, tags, read marks, and what a library page shows.

Every function takes the reader and reaches only their rows. A save is one INSERT … ON CONFLICT
DO NOTHING (the unique constraint decides), so racing saves of one paper store it once and
none of them fails; the toggle that removes it is one DELETE. Each change bumps the reader's
``Shelf.changes``, which tells the worker their recommendations need a refit.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Prefetch, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower
from django.utils import timezone

from papers.models import Paper

from .models import TAG_NAME_MAX, SavedPaper, Shelf, Tag

TAGS_PER_READER = 200
TAGS_PER_PAPER = 20


class LibraryError(ValueError):
    """A refusal whose message the reader can act on."""


def _changed(user_id: int) -> None:
    # One row per reader, counted in the database: concurrent changes each add one.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO library_shelf (user_id, changes, fitted_changes, fitted_model)"
            " VALUES (%s, 1, -1, 0)"
            " ON CONFLICT (user_id) DO UPDATE SET changes = library_shelf.changes + 1",
            [user_id],
        )


def save(*, user, paper: Paper) -> bool:
    """Put ``paper`` in the reader's library; True if it was not there yet."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO library_savedpaper (user_id, paper_id, saved_at)"
                " VALUES (%s, %s, %s) ON CONFLICT (user_id, paper_id) DO NOTHING",
                [user.pk, paper.pk, timezone.now()],
            )
            added = cursor.rowcount == 1
        if added:
            _changed(user.pk)
    return added


def unsave(*, user, paper: Paper) -> bool:
    """Take ``paper`` out of the reader's library (and its tags); True if it was there."""
    with transaction.atomic():
        removed, _ = SavedPaper.objects.filter(user=user, paper=paper).delete()
        if removed:
            _changed(user.pk)
    return bool(removed)


def toggle(*, user, paper: Paper) -> bool:
    """Save the paper, or unsave it if it is saved; True when it is saved afterwards."""
    if save(user=user, paper=paper):
        return True
    unsave(user=user, paper=paper)
    return False


def is_saved(*, user, paper: Paper) -> bool:
    return SavedPaper.objects.filter(user=user, paper=paper).exists()


def mark_read(*, user, paper: Paper, read: bool) -> None:
    SavedPaper.objects.filter(user=user, paper=paper).update(
        read_at=timezone.now() if read else None
    )


# Tags -------------------------------------------------------------------------------------


def clean_tag_name(name: str) -> str:
    """The name as it is kept: spaces collapsed, NFC. Refuses what no person types: empty,
    too long, control characters (NUL included)."""
    text = " ".join(unicodedata.normalize("NFC", name).split())
    if not text:
        raise LibraryError("Give the tag a name.")
    if len(text) > TAG_NAME_MAX:
        raise LibraryError(f"A tag’s name can be at most {TAG_NAME_MAX} characters.")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co") for ch in text):
        raise LibraryError("A tag’s name cannot contain control or invisible characters.")
    return text


def tags_of(*, user) -> QuerySet[Tag]:
    return Tag.objects.filter(user=user).annotate(
        papers=Count("saved", filter=Q(saved__paper__hidden=False))
    )


def tag_named(*, user, name: str) -> Tag | None:
    return (
        Tag.objects.filter(user=user)
        .annotate(lower=Lower("name"))
        .filter(lower=name.lower())
        .first()
    )


def create_tag(*, user, name: str) -> Tag:
    name = clean_tag_name(name)
    found = tag_named(user=user, name=name)
    if found is not None:
        return found
    if Tag.objects.filter(user=user).count() >= TAGS_PER_READER:
        raise LibraryError(f"You have {TAGS_PER_READER} tags, the most a library holds.")
    try:
        with transaction.atomic():
            return Tag.objects.create(user=user, name=name)
    except IntegrityError:  # the same name, created by a racing request
        found = tag_named(user=user, name=name)
        assert found is not None
        return found


def rename_tag(*, user, tag_id: int, name: str) -> Tag:
    name = clean_tag_name(name)
    tag = Tag.objects.get(user=user, pk=tag_id)
    other = tag_named(user=user, name=name)
    if other is not None and other.pk != tag.pk:
        raise LibraryError(f"You already have a tag “{other.name}”.")
    tag.name = name
    tag.save(update_fields=["name"])
    _changed(user.pk)
    return tag


def delete_tag(*, user, tag_id: int) -> str:
    """Delete the tag (its papers stay in the library); its name."""
    tag = Tag.objects.get(user=user, pk=tag_id)
    name = tag.name
    tag.delete()
    _changed(user.pk)
    return name


def set_tags(*, user, paper: Paper, names: Iterable[str]) -> list[Tag]:
    """The saved paper's tags become exactly ``names`` (new names make new tags); saving the
    paper first if it was not saved."""
    cleaned: dict[str, str] = {}
    for name in names:
        if name.strip():
            text = clean_tag_name(name)
            cleaned.setdefault(text.lower(), text)
    if len(cleaned) > TAGS_PER_PAPER:
        raise LibraryError(f"A paper can have at most {TAGS_PER_PAPER} tags.")
    save(user=user, paper=paper)
    tags = [create_tag(user=user, name=name) for name in cleaned.values()]
    saved = SavedPaper.objects.get(user=user, paper=paper)
    with transaction.atomic():
        # Anew, in the order typed: the links' ids keep it, and the library shows the tags
        # back in that order (``saved_papers``), not sorted.
        # (``add`` would insert them in a set's order.)
        saved.tags.clear()
        links = SavedPaper.tags.through
        links.objects.bulk_create(links(savedpaper=saved, tag=tag) for tag in tags)
    _changed(user.pk)
    return tags


# What the library page shows -------------------------------------------------------------


def saved_papers(*, user, tag: Tag | None = None, unread: bool = False) -> QuerySet[SavedPaper]:
    """The reader's saved papers, newest save first; hidden papers never show."""
    rows = SavedPaper.objects.filter(user=user, paper__hidden=False)
    if tag is not None:
        rows = rows.filter(tags=tag)
    if unread:
        rows = rows.filter(read_at__isnull=True)
    # The tags in the order the reader typed them: by the id of their link to the paper (the
    # prefetch joins the link table under its own name).
    links = SavedPaper.tags.through._meta.db_table
    in_typed_order = Tag.objects.order_by(RawSQL(f"{links}.id", ()))  # noqa: S611 - a table name of ours
    return (
        rows.select_related("paper")
        .prefetch_related(Prefetch("tags", queryset=in_typed_order))
        .order_by(F("saved_at").desc(), "-id")
    )


def saved_ids(*, user_id: int, paper_ids: Iterable[int]) -> set[int]:
    return set(
        SavedPaper.objects.filter(user_id=user_id, paper_id__in=list(paper_ids)).values_list(
            "paper_id", flat=True
        )
    )


def save_counts(paper_ids: Iterable[int]) -> dict[int, int]:
    """How many readers saved each paper (those saved at all)."""
    return dict(
        SavedPaper.objects.filter(paper_id__in=list(paper_ids))
        .values_list("paper_id")
        .annotate(n=Count("id"))
        .values_list("paper_id", "n")
    )


def library_size(*, user) -> int:
    return SavedPaper.objects.filter(user=user, paper__hidden=False).count()


def ensure_shelf(user_id: int) -> Shelf:
    shelf, _ = Shelf.objects.get_or_create(user_id=user_id)
    return shelf

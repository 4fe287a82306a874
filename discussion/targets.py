"""What a thread is about: a paper or a term, named in holes and URLs as ``paper:ID`` or
``term:ID`` (ids, not arXiv ids or slugs: a slug can be renamed, a thread cannot move)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from market.models import Term
from papers.models import Paper

from .models import Thread


@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # "paper" or "term"
    pk: int

    @classmethod
    def parse(cls, text: str) -> Target | None:
        kind, _, pk = text.partition(":")
        if kind not in ("paper", "term") or not pk.isdigit() or len(pk) > 18:
            return None
        return cls(kind, int(pk))

    def __str__(self) -> str:
        return f"{self.kind}:{self.pk}"

    @property
    def column(self) -> str:
        return f"{self.kind}_id"

    def thread(self) -> Thread | None:
        return Thread.objects.filter(**{self.column: self.pk}).first()

    def thread_or_new(self) -> Thread:
        """The target's thread, made if it has none (two first comments at once: one thread)."""
        found = self.thread()
        if found is not None:
            return found
        try:
            with transaction.atomic():
                return Thread.objects.create(**{self.column: self.pk})
        except IntegrityError:
            return Thread.objects.get(**{self.column: self.pk})

    def exists(self) -> bool:
        """Whether the paper is shown, or the term is on the market (a hidden paper's or a
        delisted term's thread takes nothing new)."""
        if self.kind == "paper":
            return Paper.objects.visible().filter(pk=self.pk).exists()
        return Term.objects.exclude(status=Term.Status.DELISTED).filter(pk=self.pk).exists()

    def title_and_url(self) -> tuple[str, str]:
        if self.kind == "paper":
            paper = Paper.objects.only("arxiv_id", "title").get(pk=self.pk)
            return paper.title_text, paper.get_absolute_url()
        term = Term.objects.only("slug", "phrase").get(pk=self.pk)
        return f"“{term.phrase}”", term.get_absolute_url()


def of_thread(thread: Thread) -> Target:
    if thread.paper_id is not None:
        return Target("paper", thread.paper_id)
    assert thread.term_id is not None  # the table's check: one or the other
    return Target("term", thread.term_id)

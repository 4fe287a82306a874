"""How far each bulk source of history has been read: what makes an import resumable."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import models

# A source's report keeps this many malformed line numbers (or record ids); the count is exact.
MALFORMED_KEPT = 100


class HistorySource(models.Model):
    """One bulk source being read: a snapshot file with its filters, or an OAI-PMH set.

    Written in the same transaction as each batch of papers it describes, so after an
    interruption the next run starts exactly after the last batch that was stored.
    """

    class Kind(models.TextChoices):
        SNAPSHOT = "snapshot", "Metadata snapshot"
        HARVEST = "harvest", "OAI-PMH harvest"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    key = models.CharField(max_length=700, unique=True, help_text="The file or set, and filters")
    # Snapshot: where the next unread line starts, in the uncompressed stream, and its number
    # (lines before it have been read).
    offset = models.BigIntegerField(default=0)
    line = models.BigIntegerField(default=0)
    # Harvest: the resumption token to go on with ("" between runs), the day of the run's
    # first answer, and the day from which the next run asks (every record changed before it
    # is stored): the first answer's day of the last open-ended run that finished.
    token = models.TextField(blank=True)
    run_date = models.DateField(null=True, blank=True)
    harvested_through = models.DateField(null=True, blank=True)
    # Of the run in progress (or the last one, once finished).
    records = models.BigIntegerField(default=0, help_text="Records read")
    kept = models.BigIntegerField(default=0, help_text="Records in the chosen categories")
    papers_created = models.BigIntegerField(default=0)
    papers_updated = models.BigIntegerField(default=0)
    listings_created = models.BigIntegerField(default=0)
    malformed = models.BigIntegerField(default=0)
    malformed_at = models.JSONField(
        default=list, blank=True, help_text=f"The first {MALFORMED_KEPT} malformed lines or ids"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The paper indexes this source's import dropped to build them afresh when it finishes
    # (papers.history.indexes): name → definition. Written in the drop's own transaction, so
    # that an interrupted import still knows, when it resumes, what it has to rebuild.
    dropped_indexes = models.JSONField(
        default=dict, blank=True, help_text="Indexes set aside until the import finishes"
    )

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        state = "finished" if self.finished_at else f"at line {self.line}"
        return f"{self.key} ({state})"

    def restart(self) -> None:
        """Forget the last run's position and counts (in memory; the caller saves)."""
        self.offset = self.line = 0
        self.token = ""
        self.run_date = None
        self.records = self.kept = self.malformed = 0
        self.papers_created = self.papers_updated = self.listings_created = 0
        self.malformed_at = []
        self.finished_at = None

    @property
    def abandoned(self) -> bool:
        """A harvest pass begun, not finished, and with no token to go on from: its token was
        refused (every page stored keeps the token after it, and the last one finishes)."""
        return (
            self.kind == self.Kind.HARVEST
            and self.started_at is not None
            and self.finished_at is None
            and not self.token
        )

    def note_malformed(self, where: Sequence[object]) -> None:
        self.malformed += len(where)
        room = MALFORMED_KEPT - len(self.malformed_at)
        if room > 0:
            self.malformed_at = [*self.malformed_at, *list(where)[:room]]


class MentionMonth(models.Model):
    """How many papers listed in a month (in one category, or in any: ``category`` empty,
    each paper once) mention a market term: the term pages' research, counted by
    ``market.research`` as papers arrive, never on a reader's request.

    Here rather than in market only so that this table's migration needs no market one (the
    market's are being renumbered); ``term_id`` is the market term's key, not a foreign key
    (papers never depends on market), and rows of a deleted term are simply never read.
    """

    term_id = models.BigIntegerField()
    category = models.ForeignKey(
        "papers.Category", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    month = models.DateField(help_text="Its first day")
    papers = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["term_id", "category", "month"],
                name="unique_mention_month",
                nulls_distinct=False,
            )
        ]
        indexes = [models.Index(fields=["month"], name="mention_month_month")]

    def __str__(self) -> str:
        return f"term {self.term_id} {self.month:%Y-%m}: {self.papers}"

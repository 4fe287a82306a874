"""A reader's library: the papers they saved, their own tags, read marks; and what the worker
stored for them (recommendations, similar papers, the text model they were scored with).

Saved papers and tags belong to one reader each: every query here starts from the reader, so
nobody can see or change another's library by guessing an id.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

TAG_NAME_MAX = 60


class Tag(models.Model):
    """A reader's own label for some of their saved papers ("serving", "to read for Friday")."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=TAG_NAME_MAX)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = [Lower("name").asc()]
        constraints = [
            # One "Serving" per reader, whatever the case they type it in.
            models.UniqueConstraint("user", Lower("name"), name="unique_tag_name_per_reader")
        ]

    def __str__(self) -> str:
        return self.name


class SavedPaper(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="saves")
    saved_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    tags = models.ManyToManyField(Tag, blank=True, related_name="saved")

    class Meta:
        ordering = ["-saved_at", "-id"]
        constraints = [
            # The database, not a check before the insert, keeps a paper in a library once:
            # twenty racing saves insert one row (library.saves uses ON CONFLICT).
            models.UniqueConstraint(fields=["user", "paper"], name="unique_saved_paper")
        ]
        indexes = [
            # Hot: saves in the last day / week / month.
            models.Index(fields=["saved_at"], name="saved_paper_saved_at"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} saved by {self.user_id}"


class Shelf(models.Model):
    """Per reader: how often their library changed, and which change the stored
    recommendations were fitted to, so the worker refits only readers whose inputs moved."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True
    )
    changes = models.BigIntegerField(default=0)
    fitted_changes = models.BigIntegerField(default=-1)
    fitted_model = models.BigIntegerField(default=0, help_text="TextModel id fitted with")
    fitted_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"shelf of {self.user_id}"


class TextModel(models.Model):
    """A fitted tf-idf vectorizer (vocabulary and idf weights, pickled: about 1 MB at 20,000
    features). The newest one is used; older ones are deleted by the next fit."""

    created_at = models.DateTimeField(auto_now_add=True)
    papers = models.PositiveIntegerField(help_text="Papers it was fitted on")
    features = models.PositiveIntegerField()
    blob = models.BinaryField()
    newest = models.DateField(null=True, blank=True, help_text="Newest listing when fitted")

    def __str__(self) -> str:
        return f"text model {self.pk} ({self.features} features)"


class Recommendation(models.Model):
    """A stored score: a new paper for a reader, ranked by their classifier. ``tag`` is the
    tag whose classifier liked it best (None: the whole library)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    tag = models.ForeignKey(Tag, null=True, blank=True, on_delete=models.CASCADE)
    rank = models.PositiveIntegerField()
    score = models.FloatField()
    liked = models.PositiveIntegerField(help_text="Saved papers the classifier learned from")
    terms = models.JSONField(default=list, help_text="Top terms shared with those papers")

    class Meta:
        ordering = ["user", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="unique_recommendation")
        ]
        indexes = [models.Index(fields=["user", "rank"], name="recommendation_user_rank")]

    def __str__(self) -> str:
        return f"{self.paper_id} for {self.user_id} (#{self.rank})"


class SimilarList(models.Model):
    """A paper's most similar papers (ids and cosine scores), found once by the worker."""

    paper = models.OneToOneField(
        "papers.Paper", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    similar = models.JSONField(default=list, help_text="[[paper id, score], …], best first")
    model = models.BigIntegerField(help_text="TextModel id")
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"similar to {self.paper_id}"


class HotPaper(models.Model):
    """The hot list of one period, as the last refresh ranked it (``library.hot.refresh``, a
    few minutes apart): a request reads its first rows by the (period, rank) key instead of
    counting a month of saves and trades. The paper's categories are copied for the category
    tab's filter."""

    period = models.CharField(max_length=8)
    rank = models.PositiveIntegerField()
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    saves = models.PositiveIntegerField()
    trades = models.PositiveBigIntegerField()
    terms = models.JSONField(default=list, help_text="The most traded terms it mentions")
    categories = models.JSONField(default=list)
    ranked_at = models.DateTimeField()

    class Meta:
        ordering = ["period", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["period", "rank"], name="unique_hot_rank"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id}: #{self.rank} of the {self.period}"


class HotRanking(models.Model):
    """When the last refresh ranked a period, and how many papers it found: a period without a
    row has not been ranked yet (the worker has not run), which the hot page tells apart from a
    period in which nothing was saved or traded (a row, no papers)."""

    period = models.CharField(max_length=8, unique=True)
    ranked_at = models.DateTimeField()
    papers = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"the {self.period}: {self.papers} papers at {self.ranked_at:%Y-%m-%d %H:%M}"


class Note(models.Model):
    """A reader's private note on a paper: shown only to them (on the paper's page, a hole
    filled per reader: library.fillers) and exported with their library (BibTeX ``note``)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    text = models.TextField(max_length=5_000)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "paper"], name="one_note_per_paper")]

    def __str__(self) -> str:
        return f"Note on {self.paper_id} by {self.user_id}"

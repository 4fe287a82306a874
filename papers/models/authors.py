"""Who wrote what, as author pages and the search's fallback look it up: the author index
(``Authorship``), the words of names and titles (``NameWord``), and folding a name."""

from __future__ import annotations

import unicodedata

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models.expressions import RawSQL

from peerrevenue import replicas


def fold_name(name: str) -> str:
    """A name without case, accents or extra spaces, as PostgreSQL's unaccent(lower()) sees
    it: "Ayşe  Dağlı" and "ayse dagli" fold alike."""
    decomposed = unicodedata.normalize("NFKD", " ".join(name.split()).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ı", "i")


def folded_name_sql(placeholder: str = "%s") -> str:
    """SQL folding a name as the author index folds bylines (``paper_author_keys`` in
    papers/sql/author_index.sql): unaccent(lower())."""
    return f"public.unaccent('public.unaccent'::regdictionary, lower({placeholder}))"


class AuthorshipQuerySet(models.QuerySet):
    def named(self, name: str) -> AuthorshipQuerySet:
        folded = RawSQL(folded_name_sql(), [" ".join(name.split())])
        return self.filter(name=folded)


class Authorship(models.Model):
    """One author of a shown paper, by the folded name author pages look up, with what the
    page orders by: an author's page reads its thirty rows and its count from one index
    (``papers_authorship_page``, migration 0021) instead of visiting every one of the
    author's papers to sort them.

    Written by the database alone: triggers on papers add a paper's rows, write them again
    when its authors, submission time, identifier or hidden flag change, and delete them
    with it. A hidden paper has none. Never write it from Python.
    """

    # Named, not imported: papers.models.papers imports this module (PaperQuerySet.by_author).
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    name = models.TextField()  # unaccent(lower(the rendered name, else the raw one))
    submitted_at = models.DateTimeField(null=True)
    arxiv_id = models.CharField(max_length=32)

    objects = AuthorshipQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.name}: {self.arxiv_id}"


# The page of an author's papers and how many there are, in one statement: the rows and the
# count come from the author's index entries; of each paper only its stamp is read (its entry
# is most often kept: papers.entries).
_AUTHOR_PAGE_SQL = """
SELECT page.paper_id, p.stamp, page.total
FROM (SELECT paper_id, submitted_at, arxiv_id, count(*) OVER () AS total
      FROM papers_authorship WHERE name = {folded}
      ORDER BY submitted_at DESC NULLS LAST, arxiv_id DESC
      OFFSET %s LIMIT %s) AS page
JOIN papers_paper AS p ON p.id = page.paper_id
ORDER BY page.submitted_at DESC NULLS LAST, page.arxiv_id DESC
"""


def author_page(*, name: str, start: int, stop: int) -> tuple[list[tuple[int, int]], int]:
    """The (paper id, stamp) of papers ``start`` to ``stop`` of an author's shown papers,
    newest first (those without a submission time last), and how many they have in all."""
    sql = _AUTHOR_PAGE_SQL.format(folded=folded_name_sql())
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(sql, [" ".join(name.split()), start, stop - start])
        rows = cursor.fetchall()
    if rows:
        return [(paper_id, stamp) for paper_id, stamp, _ in rows], rows[0][2]
    # Past the end, or no such author: the count alone.
    return [], Authorship.objects.named(name).count() if start else 0


class NameWord(models.Model):
    """A word of some paper's author names or title, accent-folded and lowercase: what the
    search's fallback compares a misspelled word with ("lamprt" is like "lamport").

    Tens of thousands of distinct words, where comparing with every paper's names and title
    means 300,000 long texts. Kept by PostgreSQL itself (the triggers of
    papers/sql/name_words.sql add the words of every paper written), so neither the ingest nor
    the admin has to know; a word whose papers changed stays, and simply finds no paper.
    """

    word = models.TextField(primary_key=True)

    class Meta:
        indexes = [GinIndex(OpClass("word", name="gin_trgm_ops"), name="nameword_trigrams")]

    def __str__(self) -> str:
        return self.word

"""Completing RSS entries from the arXiv API: the feed lacks the true primary category,
comments, affiliations and dates; the API has them."""

from __future__ import annotations

import logging
from dataclasses import replace

from papers.arxiv.client import fetch_api
from papers.arxiv.errors import EnrichmentFailed, IngestError
from papers.arxiv.queries import by_ids, page_params
from papers.arxiv.records import ParsedFeed, ParsedRecord

logger = logging.getLogger(__name__)


def enrich(parsed: ParsedFeed, *, batch_size: int = 100) -> int:
    """Complete the feed's entries from the arXiv API, by id, one throttled request per batch of
    ≤100 ids; returns how many matched."""
    enriched = 0
    ids = list(dict.fromkeys(entry.arxiv_id for entry in parsed.entries))
    for start in range(0, len(ids), batch_size):
        batch = ids[start : start + batch_size]
        found = fetch_api(page_params(by_ids(batch), start=0, size=len(batch))).entries
        enriched += merge_found(parsed, found)
    return enriched


def merge_found(parsed: ParsedFeed, found: list[ParsedRecord]) -> int:
    """Complete the feed's entries with the API entries ``found`` (by id); returns how many
    matched. Shared by the API and by an API answer read from a file (the offline sample)."""
    by_id = {entry.arxiv_id: index for index, entry in enumerate(parsed.entries)}
    enriched = 0
    for entry in found:
        index = by_id.get(entry.arxiv_id)
        if index is None:
            continue
        parsed.entries[index] = _merge(parsed.entries[index], entry)
        enriched += 1
    return enriched


def _merge(entry: ParsedRecord, found: ParsedRecord) -> ParsedRecord:
    """The feed's entry, completed with what the API knows (the feed wins on the text)."""
    authors = entry.authors
    if len(found.authors) == len(entry.authors):
        # The API spells names in Unicode where the feed may have TeX, so match by position.
        authors = [
            replace(mine, affiliation=mine.affiliation or theirs.affiliation)
            for mine, theirs in zip(entry.authors, found.authors, strict=True)
        ]
    same_version = found.version == entry.version
    categories = entry.categories
    if found.categories:
        # The API names the primary; keep the feed's other categories after the API's.
        extra = [code for code in entry.categories if code not in found.categories]
        categories = [*found.categories, *extra]
    return replace(
        entry,
        authors=authors,
        categories=categories,
        comment=entry.comment or (found.comment if same_version else ""),
        journal_ref=entry.journal_ref or found.journal_ref,
        doi=entry.doi or found.doi,
        submitted_at=entry.submitted_at or found.submitted_at,
        updated_at=entry.updated_at or (found.updated_at if same_version else None),
    )


def enrich_quietly(parsed: ParsedFeed) -> None:
    """Enrichment is a nicety: the listing works without it, so a failure only warns."""
    if not parsed.entries:
        return
    try:
        count = enrich(parsed)
    except Exception as exc:  # noqa: BLE001 - any failure here must not cost the day's listing
        logger.warning("arXiv API enrichment failed, ingesting the feed as it is: %s", exc)
    else:
        logger.info("Enriched %d of %d entries from the arXiv API", count, len(parsed.entries))


def enrich_or_fail(parsed: ParsedFeed) -> None:
    """Enrichment that was asked for: if the API cannot be reached, say so and store nothing."""
    if not parsed.entries:
        return
    try:
        count = enrich(parsed)
    except IngestError as exc:
        message = f"Completing the entries through the arXiv API failed: {exc}"
        raise EnrichmentFailed(message) from exc
    logger.info("Enriched %d of %d entries from the arXiv API", count, len(parsed.entries))

"""The ways reading arXiv fails: for good, for now, or in an enrichment someone asked for."""


class IngestError(Exception):
    """A feed could not be fetched, parsed or stored. The message says why, for a person."""


class FetchError(IngestError):
    """The network failed even after retrying: worth trying again later (the Celery task does)."""


class EnrichmentFailed(IngestError):
    """The arXiv API enrichment that was asked for (``ingest --enrich``) could not be done;
    nothing was stored. Without asking, enrichment is a nicety that only warns."""

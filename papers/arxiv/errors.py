"""The two ways reading arXiv fails: for good, or for now."""


class IngestError(Exception):
    """A feed could not be fetched, parsed or stored. The message says why, for a person."""


class FetchError(IngestError):
    """The network failed even after retrying: worth trying again later (the Celery task does)."""

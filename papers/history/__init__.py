"""arXiv's history from its bulk sources, beside the daily feed.

- ``records``: one snapshot line or one OAI-PMH arXivRaw record → a ``ParsedRecord``;
- ``store``: the one write path both use (COPY, typesetting, approximate listings);
- ``snapshot``: ``import_snapshot`` streams the metadata snapshot (JSON lines, plain or gzip);
- ``oai``: ``harvest`` pages through OAI-PMH ListRecords, incrementally;
- ``analysis``: the planner's statistics of the tables both grow, kept up as they go.

Neither source says when a paper was announced, nor whether it was new or cross-listed: a
paper's listing days are derived from its first version's submission time under arXiv's
schedule (``papers.calendar``), new in its primary category and cross-listed in the others,
and marked approximate. They never touch a day the daily feed ingested, and announce nothing
(``papers.signals.listings_announced`` is not sent): history pays no dividends.
"""

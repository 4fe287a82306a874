"""Everything about talking to arXiv and reading what it sends, with no database in sight.

- ``records``: the parsed entries and feeds that the rest of the project works with;
- ``errors``: ``IngestError`` (a reason a person can read) and ``FetchError`` (worth retrying);
- ``fields``: ids, whitespace and dates, as both formats spell them;
- ``sniffing``: what a document is (RSS, API Atom, HTML, garbage) and the strict XML parse;
- ``rss`` and ``api``: the two formats; ``documents``: whichever of them a document is;
- ``queries``: what we ask the API, as the ``arxiv`` package's ``Search``;
- ``client``: HTTP with one retry policy, and the API's politeness delay;
- ``enrichment``: completing RSS entries from the API.

``papers.ingest`` writes what these produce.
"""

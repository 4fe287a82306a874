"""The market's pages, one module per page or concept: the table (``table``), a term's page
(``term``) with the reader's own trade box (``trader``), quote and trade (``quotes``), what the
pages' scripts ask for (``live_quotes``), orders and follows (``orders``), proposals, the
portfolio, the leaderboard and the rules.

Views parse input, call ``market.stats`` (reads) or ``market.trading`` (the only writer) and
render.
"""

"""The shape of arXiv identifiers, in one place.

A paper's id goes into its URL, ``/abs/<id>/``. An id the URLconf cannot take makes ``reverse()``
fail, and every page listing the paper answers 500. So the URLconf (``papers/urls.py``) and the
ingest (``papers/ingest.py``) both read the pattern below, and cannot drift apart.
"""

from __future__ import annotations

# arXiv identifiers without the version: 2411.01234 (since 2007; four digits after the dot until
# 2014) or archive/number before that, such as math.GT/0309136 or hep-th/9901001.
#
# This is exactly what the ingest has always read from feeds, case-insensitively (it matches
# `arXiv:MATH/0309136v1` too). The flag is scoped inside the pattern so that the URLconf, which
# cannot pass flags, routes every id the ingest can store: otherwise such a paper would have no
# address and the pages listing it would fail.
ARXIV_ID = r"(?i:\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})"

"""The shapes of arXiv identifiers and category codes, in one place.

Every value stored in these columns goes into a URL: a paper's id into ``/abs/<id>/``, a
category's code into ``/list/<code>/`` and its archive code into ``/archive/<code>/``. A value the
URLconf cannot take makes ``reverse()`` fail, and every page listing the row answers 500. So the
URLconf (``papers/urls.py``), the ingest (``papers/ingest.py``) and the model validators the admin
runs all read the patterns below, and cannot drift apart.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

# arXiv identifiers without the version: 2411.01234 (since 2007; four digits after the dot until
# 2014) or archive/number before that, such as math.GT/0309136 or hep-th/9901001.
#
# This is exactly what the ingest has always read from feeds, case-insensitively (it matches
# `arXiv:MATH/0309136v1` too). The flag is scoped inside the pattern so that the URLconf, which
# cannot pass flags, routes every id the ingest can store: otherwise such a paper would have no
# address and the pages listing it would fail.
ARXIV_ID = r"(?i:\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})"

# An archive is lowercase words joined by hyphens: cs, math, astro-ph, q-bio, cond-mat.
ARCHIVE_CODE = r"[a-z]+(?:-[a-z]+)*"
# A category is its archive, optionally with a subject class after one dot: cs.DC, math.GT,
# astro-ph.CO, q-bio.NC, and lowercase ones such as physics.acc-ph or cond-mat.stat-mech.
# No "/" and no spaces, so a code is always one path segment of /list/<code>/.
CATEGORY_CODE = rf"{ARCHIVE_CODE}(?:\.[A-Za-z]+(?:-[A-Za-z]+)*)?"

_ARXIV_ID_RE = re.compile(ARXIV_ID)
_ARCHIVE_CODE_RE = re.compile(ARCHIVE_CODE)
_CATEGORY_CODE_RE = re.compile(CATEGORY_CODE)

ARXIV_ID_MESSAGE = (
    "Enter an arXiv identifier like 2611.01234 or math.GT/0309136, without the version."
)
CATEGORY_CODE_MESSAGE = (
    "Enter an arXiv category code like cs.DC, astro-ph or astro-ph.CO: "
    "letters and hyphens, with at most one dot and no spaces or slashes."
)
ARCHIVE_CODE_MESSAGE = (
    "Enter an arXiv archive code like cs or astro-ph: lowercase letters and hyphens only."
)


# Functions rather than RegexValidator instances: migrations refer to them by name, so a later
# change to a pattern takes effect without a migration that copies the pattern again.
def validate_arxiv_id(value: str) -> None:
    if not _ARXIV_ID_RE.fullmatch(value):
        raise ValidationError(ARXIV_ID_MESSAGE, code="invalid_arxiv_id")


def validate_category_code(value: str) -> None:
    if not _CATEGORY_CODE_RE.fullmatch(value):
        raise ValidationError(CATEGORY_CODE_MESSAGE, code="invalid_category_code")


def validate_archive_code(value: str) -> None:
    if not _ARCHIVE_CODE_RE.fullmatch(value):
        raise ValidationError(ARCHIVE_CODE_MESSAGE, code="invalid_archive_code")

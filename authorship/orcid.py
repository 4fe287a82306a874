"""ORCID iDs: sixteen characters in four groups, the last an ISO 7064 MOD 11-2 check digit
over the fifteen before it (ORCID's own scheme), so a mistyped iD is caught here rather than
by the curator."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

ORCID_FORM = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])")
# Readers paste the iD as ORCID prints it too: https://orcid.org/0000-0002-1825-0097.
ORCID_PREFIXES = ("https://orcid.org/", "http://orcid.org/", "orcid.org/")


def check_digit(digits: str) -> str:
    """The MOD 11-2 check character of fifteen digits: "0"–"9", or "X" for ten."""
    total = 0
    for digit in digits:
        total = (total + int(digit)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def normalise_orcid(value: str) -> str:
    """The iD as 0000-0000-0000-000X, from what a reader typed or pasted; ValidationError
    saying what is wrong otherwise. An empty value stays empty (the iD is optional)."""
    text = value.strip()
    for prefix in ORCID_PREFIXES:
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
            break
    if not text:
        return ""
    found = ORCID_FORM.fullmatch(text.upper())
    if found is None:
        raise ValidationError(
            "An ORCID iD is sixteen characters in four groups, such as 0000-0002-1825-0097.",
            code="orcid_form",
        )
    digits = "".join(found.groups())
    if check_digit(digits[:15]) != digits[15]:
        raise ValidationError(
            "This ORCID iD's last character does not check out: please copy it again from "
            "your ORCID record.",
            code="orcid_check_digit",
        )
    return "-".join(found.groups())

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from authorship.orcid import check_digit, normalise_orcid


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("0000-0002-1825-0097", "0000-0002-1825-0097"),
        ("0000-0001-5109-3700", "0000-0001-5109-3700"),
        ("0000-0002-1694-233x", "0000-0002-1694-233X"),  # a check digit of ten is X
        ("https://orcid.org/0000-0002-1825-0097", "0000-0002-1825-0097"),
        (" 0000000218250097 ", "0000-0002-1825-0097"),
        ("", ""),
    ],
)
def test_an_orcid_id_as_readers_type_or_paste_it(typed, stored):
    assert normalise_orcid(typed) == stored


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("0000-0002-1825-0098", "orcid_check_digit"),  # one digit off
        ("0000-0002-1825-0079", "orcid_check_digit"),  # two digits swapped
        ("0000-0002-1825", "orcid_form"),
        ("0000-0002-1825-00971", "orcid_form"),
        ("abcd-efgh-ijkl-mnop", "orcid_form"),
        ("0000-0002-1825-009\x00", "orcid_form"),
    ],
)
def test_a_mistyped_orcid_id_is_refused_saying_why(typed, code):
    with pytest.raises(ValidationError) as refused:
        normalise_orcid(typed)
    assert refused.value.code == code


def test_the_check_digit_is_iso_7064_mod_11_2():
    assert check_digit("000000021825009") == "7"
    assert check_digit("000000021694233") == "X"

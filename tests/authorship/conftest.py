from __future__ import annotations

import pytest

from tests.factories import make_paper


@pytest.fixture
def own_paper(db):
    """A paper by Rosalind Franklin, the name the reader persona signs in as."""
    return make_paper(
        title="Diffraction of consensus", authors=["Rosalind Franklin", "Maurice Wilkins"]
    )

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fresh_models():
    """Each test fits its own text model and pool: the process keeps them between requests."""
    from library.recommend import pool, text

    pool.forget()
    text.forget()
    yield
    pool.forget()
    text.forget()

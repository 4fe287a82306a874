"""Celery tasks of the library: they take primary keys and call the domain functions.

Beat runs ``nightly`` after the daily pipeline (a new day changes every reader's candidates)
and ``refit_changed`` every few minutes (a save queues its reader's refit at once; this catches
any the broker lost). A paper page asks for ``find_similar`` once per paper.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from .models import SimilarList
from .recommend import pool, readers, similar, text

logger = logging.getLogger(__name__)


@shared_task(name="library.tasks.refit_reader", autoretry_for=(OperationalError,), max_retries=3)
def refit_reader(user_id: int) -> int:
    return readers.refit(user_id=user_id)


@shared_task(name="library.tasks.refit_changed")
def refit_changed() -> dict[str, int]:
    return readers.refit_readers(only_changed=True)


@shared_task(name="library.tasks.find_similar", autoretry_for=(OperationalError,), max_retries=3)
def find_similar(paper_id: int) -> int:
    return len(similar.store(paper_id=paper_id))


@shared_task(name="library.tasks.nightly")
def nightly() -> dict[str, int]:
    """Refit the text model if a new day came in, every reader, and find the similar papers of
    the new papers that have none yet."""
    fitted = 0
    if text.needs_fit():
        text.fit()
        fitted = 1
    summary = readers.refit_readers(only_changed=False)
    model = text.current()
    found = 0
    if model is not None:
        new = pool.current(model).candidates
        done = set(
            SimilarList.objects.filter(paper_id__in=new, model=model.id).values_list(
                "paper_id", flat=True
            )
        )
        for paper_id in new:
            if paper_id not in done:
                similar.store(paper_id=paper_id)
                found += 1
    logger.info(
        "Recommendations: model fitted %s, %s, similar found for %s", fitted, summary, found
    )
    return {"fitted": fitted, **summary, "similar": found}

"""Celery tasks of the library: they take primary keys and call the domain functions.

Beat runs ``nightly`` after the daily pipeline (a new day changes every reader's candidates)
and ``refit_changed`` every few minutes (a save queues its reader's refit at once; this catches
any the broker lost). A paper page asks for ``find_similar`` once per paper.
"""

from __future__ import annotations

import logging

from celery import shared_task

from peerrevenue.retries import database_task

# ``refresh_hot`` is defined beside what queues it (``hot.refresh_soon``); named here so the
# worker, which imports this module, registers it.
from .hot import refresh_hot as refresh_hot
from .models import SimilarList
from .recommend import pool, readers, similar, text

logger = logging.getLogger(__name__)


@database_task("library.tasks.refit_reader")
def refit_reader(user_id: int) -> int:
    return readers.refit(user_id=user_id)


@shared_task(name="library.tasks.refit_changed")
def refit_changed() -> dict[str, int]:
    return readers.refit_readers(only_changed=True)


@database_task("library.tasks.find_similar")
def find_similar(paper_id: int) -> int:
    return len(similar.store(paper_id=paper_id))


@shared_task(name="library.tasks.nightly")
def nightly() -> dict[str, int]:
    """Refit the text model if a new day came in, then queue a refit of every reader and the
    similar papers of each new paper that has none yet: one task each, so that no task runs
    past the time limit that the broker's visibility timeout is sized for, however many
    readers there are, and two workers share them."""
    fitted = 0
    if text.needs_fit():
        text.fit()
        fitted = 1
    model = text.current()
    if model is None:
        return {"fitted": fitted, "readers": 0, "similar": 0}
    shelves = list(readers.readers_with_a_library())
    for user_id in shelves:
        refit_reader.delay(user_id)
    new = pool.current(model).candidates
    done = set(
        SimilarList.objects.filter(paper_id__in=new, model=model.id).values_list(
            "paper_id", flat=True
        )
    )
    missing = [paper_id for paper_id in new if paper_id not in done]
    for paper_id in missing:
        find_similar.delay(paper_id)
    logger.info(
        "Recommendations: model fitted %s, refits queued for %s readers, similar papers for %s",
        fitted,
        len(shelves),
        len(missing),
    )
    return {"fitted": fitted, "readers": len(shelves), "similar": len(missing)}

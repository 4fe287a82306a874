"""A gunicorn worker's first request, done before it takes one: every import a page may need
(the views, every task module, scikit-learn behind the recommendations) and every template
compiled. Without it the first page each worker serves takes seconds longer than the next.

Run in each worker after the fork (``post_worker_init`` in ``peerrevenue/gunicorn_conf.py``),
never in the arbiter, and without touching the database: a connection opened before the fork
would be shared by every worker. What it fills (modules, the template loader's cache) lives as
long as the worker, and ``settle`` then puts it out of the garbage collector's way.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path


def _template_names(directory: Path) -> list[str]:
    return sorted(
        str(path.relative_to(directory))
        for path in directory.rglob("*")
        if path.suffix in {".html", ".txt"} and path.is_file()
    )


def warm(*, tick: Callable[[], None] = lambda: None) -> float:
    """Import and compile what pages use; returns the seconds it took. ``tick`` is called
    between steps (gunicorn's heartbeat: a worker silent for its timeout is replaced)."""
    started = time.monotonic()
    from django.template import TemplateSyntaxError, engines
    from django.urls import get_resolver

    # Every URLconf and view module.
    get_resolver().url_patterns  # noqa: B018 - the property imports them
    tick()
    # Every app's tasks module: a view queues tasks, and eager tasks (a local site) run in the
    # request; the recommender's imports (scikit-learn, SciPy) are the slowest of all.
    from peerrevenue.celery import app

    app.loader.import_default_modules()
    tick()
    # The project's own templates (the admin's are compiled when a curator first asks).
    engine = engines["django"]
    for directory in (Path(d) for d in engine.dirs):
        for name in _template_names(directory):
            try:
                engine.get_template(name)
            except TemplateSyntaxError:
                continue  # a page would fail the same way; warming must not stop the worker
    tick()
    return time.monotonic() - started


def settle() -> int:
    """Move every object alive now out of the garbage collector's reach, for good; returns how
    many. Called once the site is warm, before the first request.

    A warmed worker holds about 240,000 objects that live as long as it does (Django, the
    apps, scikit-learn and SciPy). A full collection walks every one of them, about 150 ms on
    our machines, and it falls on whichever request happens to allocate when it is due: one
    request in several hundred waited that long (bench/discussion.py's p99). Frozen, they are
    never walked again; what requests make afterwards is collected as before. Collected first,
    so that no garbage of the warm-up is frozen with them (it would never be freed). Before a
    fork (the preloaded arbiter) it also keeps the collector from writing to pages the workers
    share, as Python's documentation of ``gc.freeze`` advises.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()

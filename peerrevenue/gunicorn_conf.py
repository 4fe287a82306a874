"""gunicorn's hooks for the site: ``gunicorn -c python:peerrevenue.gunicorn_conf peerrevenue.wsgi``.

- ``INSTANCE_NAME``, when unset, becomes host:port of the first bind address, so the logs of two
  instances on one host tell them apart (workers are forked after this and inherit it).
- ``PROMETHEUS_MULTIPROC_DIR`` (peerrevenue/metrics.py) is emptied when the arbiter starts, as
  prometheus_client requires: counts of an earlier run's workers must not be added to this
  one's. Each instance needs a directory of its own. A worker that exits keeps its counts (its
  file stays; counters only grow), which is what a scrape should add up.
- Each worker is warmed up (``peerrevenue/warmup.py``) before it accepts its first request;
  with ``--preload``, once in the arbiter before the workers fork.
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path


def on_starting(server) -> None:
    if not os.environ.get("INSTANCE_NAME"):
        bind = (server.cfg.bind or ["127.0.0.1:8000"])[0]
        port = bind.rsplit(":", 1)[-1] if ":" in bind else bind
        os.environ["INSTANCE_NAME"] = f"{platform.node()}:{port}"
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        path = Path(directory)
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)


def when_ready(server) -> None:
    # With --preload (make run) the site is loaded in the arbiter: warm it there once, before
    # the workers fork, and they start with it all (two workers warming at once would each
    # import, and on a fresh .venv byte-compile, the same modules on the same cores). Nothing
    # here opens a database connection, which the forked workers would share.
    if server.cfg.preload_app:
        from peerrevenue.warmup import warm

        server.log.info("Site warmed up before the workers fork, in %.1f s", warm())


def post_worker_init(worker) -> None:
    # After the fork, before the worker accepts: its first request is then as quick as the
    # next (peerrevenue/warmup.py). The heartbeat between steps keeps the arbiter from taking
    # a slow warm-up on a busy machine for a hung worker.
    from peerrevenue.warmup import warm

    seconds = warm(tick=worker.notify)
    worker.log.info("Worker %s warmed up in %.1f s", worker.pid, seconds)

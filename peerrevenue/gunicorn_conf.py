"""gunicorn's hooks for the site: ``gunicorn -c python:peerrevenue.gunicorn_conf peerrevenue.wsgi``.

- ``INSTANCE_NAME``, when unset, becomes host:port of the first bind address, so the logs of two
  instances on one host tell them apart (workers are forked after this and inherit it).
- ``PROMETHEUS_MULTIPROC_DIR`` (peerrevenue/metrics.py) is emptied when the arbiter starts, as
  prometheus_client requires: counts of an earlier run's workers must not be added to this
  one's. Each instance needs a directory of its own. A worker that exits keeps its counts (its
  file stays; counters only grow), which is what a scrape should add up.
- ``HEALTH_PORT``, when set, is where the master answers ``/healthz`` from the reports each
  worker writes every second (``peerrevenue.health_port``), on the host of the first bind
  address: the port the load balancer checks, answered however busy the workers are.
- Each worker is warmed up (``peerrevenue/warmup.py``) before it accepts its first request;
  with ``--preload``, once in the arbiter before the workers fork. What the warm-up leaves is
  then frozen (``warmup.settle``): no full garbage collection walks it in a request.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from pathlib import Path


def _bind_host(server) -> str:
    bind = (server.cfg.bind or ["127.0.0.1:8000"])[0]
    if bind.startswith(("unix:", "fd://")):
        return "127.0.0.1"
    host = bind.rsplit(":", 1)[0] if ":" in bind else "127.0.0.1"
    return host.strip("[]") or "0.0.0.0"


def _health_reports() -> Path | None:
    directory = os.environ.get("HEALTH_REPORTS_DIR")
    return Path(directory) if os.environ.get("HEALTH_PORT") and directory else None


def post_fork(server, worker) -> None:
    if _health_reports() is not None:
        from peerrevenue import health_port

        health_port.close_inherited()


def child_exit(server, worker) -> None:
    directory = _health_reports()
    if directory is not None:
        from peerrevenue import health_port

        health_port.forget_worker(directory, worker.pid)


def on_exit(server) -> None:
    directory = _health_reports()
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


def on_starting(server) -> None:
    if not os.environ.get("INSTANCE_NAME"):
        bind = (server.cfg.bind or ["127.0.0.1:8000"])[0]
        port = bind.rsplit(":", 1)[-1] if ":" in bind else bind
        os.environ["INSTANCE_NAME"] = f"{platform.node()}:{port}"
    if os.environ.get("HEALTH_PORT"):
        # Where the workers report to the master (inherited by every worker forked later).
        os.environ["HEALTH_REPORTS_DIR"] = tempfile.mkdtemp(prefix="peerrevenue-health-")
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        path = Path(directory)
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)


def when_ready(server) -> None:
    """In the master, its sockets bound: answer the health port from the workers' reports,
    and warm the site once when it is preloaded."""
    directory = _health_reports()
    if directory is not None:
        from peerrevenue import health_port

        health_port.serve(
            host=_bind_host(server), port=int(os.environ["HEALTH_PORT"]), directory=directory
        )
    # With --preload (make run) the site is loaded in the arbiter: warm it there once, before
    # the workers fork, and they start with it all (two workers warming at once would each
    # import, and on a fresh .venv byte-compile, the same modules on the same cores). Nothing
    # here opens a database connection, which the forked workers would share.
    if server.cfg.preload_app:
        from peerrevenue.warmup import settle, warm

        server.log.info("Site warmed up before the workers fork, in %.1f s", warm())
        settle()


def post_worker_init(worker) -> None:
    # After the fork, before the worker accepts: its first request is then as quick as the
    # next (peerrevenue/warmup.py). The heartbeat between steps keeps the arbiter from taking
    # a slow warm-up on a busy machine for a hung worker.
    from peerrevenue.warmup import settle, warm

    seconds = warm(tick=worker.notify)
    frozen = settle()
    worker.log.info(
        "Worker %s warmed up in %.1f s; %d objects set out of the collector's way",
        worker.pid,
        seconds,
        frozen,
    )
    # Reports start once the site is loaded (health's checks use its settings), and after the
    # warm-up, so that a worker still warming is not yet counted as answering.
    directory = _health_reports()
    if directory is not None:
        from peerrevenue import health_port

        health_port.start_reporting(directory)

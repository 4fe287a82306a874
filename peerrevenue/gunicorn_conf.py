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


def when_ready(server) -> None:
    """In the master, its sockets bound: answer the health port from the workers' reports."""
    directory = _health_reports()
    if directory is not None:
        from peerrevenue import health_port

        health_port.serve(
            host=_bind_host(server), port=int(os.environ["HEALTH_PORT"]), directory=directory
        )


def post_fork(server, worker) -> None:
    if _health_reports() is not None:
        from peerrevenue import health_port

        health_port.close_inherited()


def post_worker_init(worker) -> None:
    """In each worker, once the site is loaded (health's checks use its settings)."""
    directory = _health_reports()
    if directory is not None:
        from peerrevenue import health_port

        health_port.start_reporting(directory)


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

"""``/healthz`` on a port of its own (``HEALTH_PORT``), answered at once however busy the
workers are: the port the load balancer checks.

Why: a sync worker serves one request at a time. With every worker of an instance busy on cold
pages, the balancer's check waited in the same queue as the readers, past its timeout, and the
balancer took out instances that were merely busy: both at once, and every reader got its 503.
Busy is not down; the balancer's own queue is the place for requests that must wait.

How, and why this tells the truth about the instance:

- **Each worker checks itself**, from a thread of its own, every ``REPORT_SECONDS``: the same
  ``peerrevenue.health.health()`` as ``/healthz`` on the site's port (the database or a replica,
  Redis, the static manifest), in the process that serves the pages, with its settings and
  clients. It writes its verdict, with the time, to a file of its own in ``HEALTH_REPORTS_DIR``.
- **The master answers** the port from a thread of its own, from those files. The master runs
  no pages, so nothing there competes with the answer (a thread inside a busy worker must win
  the GIL from the page being rendered, several times per check: measured, up to half a second
  on this machine), and it knows nothing it was not told by a worker: 200 while some worker
  reported the site serving within ``STALE_SECONDS``, 503 when they report it down, and 503 when
  no worker has reported in that long (none alive, or all stuck: the instance cannot serve).

More request threads (gthread) would still queue the check behind pages once they are all busy,
and a master checking the database itself would say nothing about the workers. Only the health
path is answered on the port (404 otherwise), without a ``Host`` check (it is not published);
requests are not logged (the balancer asks every second), changes of state are, by ``health()``.

The master half imports nothing of Django (the master never loads the site); gunicorn's hooks
in ``peerrevenue.gunicorn_conf`` start both halves.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

PATH = "/healthz"
REPORT_SECONDS = 1.0
# A worker that has not managed a check this long is not serving anyone either.
STALE_SECONDS = 5.0


# The workers' half ---------------------------------------------------------------------------


def report_path(directory: Path, pid: int) -> Path:
    return directory / f"{pid}.json"


def write_report(directory: Path, *, status: int, checks: dict[str, str], at: float) -> None:
    """This process's verdict, replaced whole (a reader never sees half of one)."""
    final = report_path(directory, os.getpid())
    partial = final.with_suffix(".partial")
    partial.write_text(json.dumps({"status": status, "checks": checks, "at": at}))
    partial.replace(final)


def _report_forever(directory: Path) -> None:
    from django.db import connections

    from . import health

    try:
        while True:
            status, checks = health.health()
            write_report(directory, status=status, checks=checks, at=time.time())
            time.sleep(REPORT_SECONDS)
    finally:
        connections.close_all()  # this thread's own


def start_reporting(directory: Path) -> None:
    """In a worker with the site loaded: check and report every REPORT_SECONDS until the
    process ends."""
    threading.Thread(
        target=_report_forever, args=(directory,), name="health report", daemon=True
    ).start()


def forget_worker(directory: Path, pid: int) -> None:
    report_path(directory, pid).unlink(missing_ok=True)


# The master's half ---------------------------------------------------------------------------


def verdict(directory: Path, *, now: float) -> tuple[int, dict[str, str]]:
    """What the instance answers: the workers' fresh reports, a serving one first."""
    fresh = []
    for path in directory.glob("*.json"):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # a worker gone meanwhile
        if now - float(report["at"]) <= STALE_SECONDS:
            fresh.append(report)
    if not fresh:
        return 503, {"workers": f"none has reported in {STALE_SECONDS:.0f} s"}
    serving = [report for report in fresh if report["status"] == 200]
    chosen = serving[0] if serving else fresh[0]
    checks = dict(chosen["checks"])
    checks["workers"] = f"{len(serving)} of {len(fresh)} reporting serving"
    return (200 if serving else 503), checks


class _Handler(BaseHTTPRequestHandler):
    server_version = "peerrevenue-health"
    # One thread answers every check, one at a time: each connection is closed after its
    # answer (HTTP/1.0), and a client that says nothing is dropped after a second, so that no
    # client can keep the thread from the balancer's next check.
    protocol_version = "HTTP/1.0"
    timeout = 1
    directory: Path

    def do_GET(self) -> None:  # noqa: N802 - the name http.server looks for
        if self.path.split("?", 1)[0] != PATH:
            self._answer(404, {"error": f"only {PATH} is answered on this port"})
            return
        status, checks = verdict(self.directory, now=time.time())
        self._answer(status, checks)

    def _answer(self, status: int, body: dict[str, str]) -> None:
        payload = (json.dumps(body) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        if status != 200:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line a second per instance would drown the logs


class _Server(HTTPServer):
    allow_reuse_address = True


_server: HTTPServer | None = None


def serve(*, host: str, port: int, directory: Path) -> None:
    """In the master: answer ``/healthz`` on ``host``:``port`` from a daemon thread, once."""
    global _server
    if _server is not None:
        return  # a reload (HUP) keeps the one it has
    handler = type("Handler", (_Handler,), {"directory": directory})
    _server = _Server((host, port), handler)
    threading.Thread(target=_server.serve_forever, name="health port", daemon=True).start()


def close_inherited() -> None:
    """In a worker just forked: the master's listening socket is not the worker's to hold."""
    if _server is not None:
        _server.socket.close()

"""Real server processes for the tests that need them: free ports, a private Redis that a test
may stop and start again, and the site under gunicorn.

Nothing here touches the machine's own PostgreSQL or Redis services: a test that takes a
service away starts its own copy on a port of its own and stops only that.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=2)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise AssertionError(f"{url} never answered")


class PrivateRedis:
    """A redis-server of the test's own on a free port, without persistence: ``stop()`` kills
    it (what it held is lost, as in a crash), ``start()`` brings up a new one on the same port,
    ``pause()``/``resume()`` freeze it (connections hang until they time out, data is kept)."""

    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed")
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def pause(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


def start_gunicorn(
    *,
    env: dict[str, str],
    port: int,
    workers: int = 2,
    log: Path | None = None,
    output: Path | None = None,
) -> subprocess.Popen:
    """The site as production serves it, on 127.0.0.1:``port``; stop it with ``stop_process``.
    ``log``: the access log, one ``<pid> <request line>`` a request; ``output``: gunicorn's own
    output (errors and warnings), to read when something fails."""
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "peerrevenue.wsgi",
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
    ]
    if log is not None:
        command += ["--access-logfile", str(log), "--access-logformat", "%(p)s %(r)s"]
    sink = output.open("ab") if output is not None else subprocess.DEVNULL
    try:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=sink)
    finally:
        if output is not None:
            sink.close()


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the site's own settings, plus ``extra``."""
    own = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_DEBUG"}
    own |= {"DJANGO_ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return {k: v for k, v in os.environ.items() if k not in own} | extra

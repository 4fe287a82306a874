"""`python -m peerrevenue.embedded_db start|stop|status`: the local server, for make run."""

from __future__ import annotations

import sys

from .server import data_dir, ensure_running, is_running, stop


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if command == "start":
        address = ensure_running()
        print(f"Embedded PostgreSQL is running on {address.socket_dir} (data in {data_dir()})")
        return 0
    if command == "stop":
        print("Embedded PostgreSQL stopped." if stop() else "Embedded PostgreSQL was not running.")
        return 0
    if command == "status":
        print("running" if is_running() else "stopped")
        return 0
    print("usage: python -m peerrevenue.embedded_db start|stop|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The trivial WSGI app that bench/pages.py compares Django against: fixed bytes, no work."""

import os
from pathlib import Path

BODY = Path(os.environ["BENCH_BODY_FILE"]).read_bytes()
HEADERS = [
    ("Content-Type", os.environ.get("BENCH_CONTENT_TYPE", "text/html; charset=utf-8")),
    ("Content-Length", str(len(BODY))),
]


def app(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]

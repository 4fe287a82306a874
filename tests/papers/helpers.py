"""Helpers for the ingest tests: fixture files and a local stand-in for arXiv's servers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = Path(__file__).resolve().parents[2] / "sample"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]

    def param(self, name: str) -> str:
        return self.query.get(name, [""])[0]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that timed out on purpose (the timeout test) leaves a broken pipe behind.
        pass


class FakeArxiv:
    """A local HTTP server answering by path with scripted replies (the last one repeats),
    or with a callable for replies that depend on the query. Records every request. ``port``:
    a fixed one, for processes started before it that were told where it would be."""

    def __init__(self, port: int = 0) -> None:
        self.routes: dict[str, list[Reply] | Callable[[Request], Reply]] = {}
        self.requests: list[Request] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                parts = urlsplit(self.path)
                request = Request(parts.path, parse_qs(parts.query), dict(self.headers))
                outer.requests.append(request)
                reply = outer._reply(request)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", port), Handler)
        # A short poll interval so that shutting the server down after each test is quick.
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)  # an IP socket's address (typeshed allows a Unix one's)
        return f"http://{host}:{port}"

    def route(self, path: str, *replies: Reply) -> None:
        self.routes[path] = list(replies)

    def route_function(self, path: str, function: Callable[[Request], Reply]) -> None:
        self.routes[path] = function

    def hits(self, path: str) -> list[Request]:
        return [request for request in self.requests if request.path == path]

    def _reply(self, request: Request) -> Reply:
        route = self.routes.get(request.path)
        if route is None:
            return Reply(404, b"not found")
        if callable(route):
            return route(request)
        return route.pop(0) if len(route) > 1 else route[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def atom_entry(
    arxiv_id: str,
    *,
    published: str,
    version: int = 1,
    title: str = "A paper",
    summary: str = "An abstract about consensus.",
    primary: str = "cs.DC",
    others: tuple[str, ...] = (),
    authors: tuple[tuple[str, str], ...] = (("Ada Byron", ""),),
    comment: str = "",
) -> str:
    """One arXiv API <entry>, shaped like export.arxiv.org's."""
    people = "".join(
        f"<author><name>{name}</name>"
        + (f"<arxiv:affiliation>{affiliation}</arxiv:affiliation>" if affiliation else "")
        + "</author>"
        for name, affiliation in authors
    )
    categories = "".join(
        f'<category term="{code}" scheme="http://arxiv.org/schemas/atom"/>'
        for code in (primary, *others)
    )
    return (
        f"<entry><id>http://arxiv.org/abs/{arxiv_id}v{version}</id>"
        f"<updated>{published}</updated><published>{published}</published>"
        f"<title>{title}</title><summary>  {summary}\n</summary>{people}"
        + (f"<arxiv:comment>{comment}</arxiv:comment>" if comment else "")
        + f'<link href="http://arxiv.org/abs/{arxiv_id}v{version}" rel="alternate" '
        'type="text/html"/>'
        f'<arxiv:primary_category term="{primary}" scheme="http://arxiv.org/schemas/atom"/>'
        f"{categories}</entry>"
    )


def atom_feed(entries: list[str], *, total: int, start: int = 0) -> bytes:
    """An arXiv API response page (the newer style, namespaces declared on the root)."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom">'
        "<id>https://arxiv.org/api/test</id><title>arXiv Query</title>"
        "<updated>2026-11-24T00:00:00Z</updated>"
        f"<opensearch:itemsPerPage>{len(entries)}</opensearch:itemsPerPage>"
        f"<opensearch:totalResults>{total}</opensearch:totalResults>"
        f"<opensearch:startIndex>{start}</opensearch:startIndex>" + "".join(entries) + "</feed>"
    ).encode()


def rss_item(
    arxiv_id: str,
    *,
    title: str = "A paper",
    abstract: str = "An abstract about consensus.",
    creator: str = "Ada Byron",
    categories: tuple[str, ...] = ("cs.DC",),
    kind: str = "new",
    pub_date: str = "",
) -> str:
    """One rss.arxiv.org <item>; the text is escaped here, so pass it raw."""
    description = f"arXiv:{arxiv_id}v1 Announce Type: {kind} \nAbstract: {abstract}"
    return (
        f"<item><title>{escape(title)}</title>"
        f"<link>https://arxiv.org/abs/{arxiv_id}</link>"
        f"<description>{escape(description)}</description>"
        f'<guid isPermaLink="false">oai:arXiv.org:{arxiv_id}v1</guid>'
        + "".join(f"<category>{escape(code)}</category>" for code in categories)
        + (f"<pubDate>{pub_date}</pubDate>" if pub_date else "")
        + f"<arxiv:announce_type>{kind}</arxiv:announce_type>"
        f"<dc:creator>{escape(creator)}</dc:creator></item>"
    )


def rss_feed(items: list[str], *, pub_date: str = "Tue, 24 Nov 2026 00:00:00 -0500") -> bytes:
    """An rss.arxiv.org cs.DC feed dated `pub_date` (written as is, however wrong)."""
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<rss xmlns:arxiv="http://arxiv.org/schemas/atom" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" version="2.0"><channel>'
        "<title>cs.DC updates on arXiv.org</title>"
        "<link>http://rss.arxiv.org/rss/cs.DC</link>"
        f"<pubDate>{pub_date}</pubDate>" + "".join(items) + "</channel></rss>"
    ).encode()

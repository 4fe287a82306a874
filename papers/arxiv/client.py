"""HTTP to arXiv: one retry policy for every request, and the API's politeness delay.

We talk to the API ourselves rather than through `arxiv.Client` (4.0.2), which has no request
timeout (a hung connection parks the worker), ignores `Retry-After`, retries at once without
backing off, and treats an empty first page as "no results" although that is a known glitch.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import requests
import urllib3
from django.conf import settings
from django.utils import timezone

from papers.arxiv.api import parse_api
from papers.arxiv.errors import FetchError, IngestError
from papers.arxiv.records import ParsedFeed

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _sleep(seconds: float) -> None:
    """Indirection so tests can observe (and skip) the waits."""
    time.sleep(seconds)


@dataclass(frozen=True)
class Retry:
    """An attempt that failed in a way worth retrying; `after` is what the server asked for."""

    problem: str
    after: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """Up to `retries` more attempts, waiting `backoff · 2^attempt` seconds (or what the server
    asked for), never more than `max_delay`: a misbehaving server must not park the worker for
    hours. Defaults come from settings (ARXIV_HTTP_RETRIES, ARXIV_HTTP_BACKOFF_SECONDS,
    ARXIV_HTTP_MAX_DELAY_SECONDS) so tests can make them tiny."""

    retries: int
    backoff: float
    max_delay: float

    @classmethod
    def from_settings(
        cls,
        *,
        retries: int | None = None,
        backoff: float | None = None,
        max_delay: float | None = None,
    ) -> RetryPolicy:
        return cls(
            retries=int(settings.ARXIV_HTTP_RETRIES if retries is None else retries),
            backoff=float(settings.ARXIV_HTTP_BACKOFF_SECONDS if backoff is None else backoff),
            max_delay=float(
                settings.ARXIV_HTTP_MAX_DELAY_SECONDS if max_delay is None else max_delay
            ),
        )

    def run(
        self, attempt: Callable[[], T | Retry], *, what: str, gave_up: Callable[[int, str], str]
    ) -> T:
        """Call `attempt` until it returns something other than a `Retry`, or give up with a
        `FetchError` whose message is `gave_up(attempts, last problem)`."""
        problem = ""
        for number in range(self.retries + 1):
            outcome = attempt()
            if not isinstance(outcome, Retry):
                return outcome
            problem = outcome.problem
            if number < self.retries:
                asked = outcome.after
                wait = min(self.max_delay, self.backoff * 2**number if asked is None else asked)
                logger.warning(
                    "%s failed (%s); retry %d of %d in %.1f s",
                    what,
                    problem,
                    number + 1,
                    self.retries,
                    wait,
                )
                _sleep(wait)
        raise FetchError(gave_up(self.retries + 1, problem))


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return max(0.0, (moment - timezone.now()).total_seconds())


_RETRYABLE_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,  # a body cut off mid-transfer
    requests.exceptions.ContentDecodingError,
)


def _unresolved_host(exc: BaseException) -> bool:
    """Whether ``exc`` comes from a host name that did not resolve: no network, no DNS, or a
    wrong address. Retrying within seconds cannot help (the Celery task retries over minutes,
    which can); a person at the command line wants to know at once."""
    pending: list[object] = [exc]
    seen: set[int] = set()
    while pending:
        error = pending.pop()
        if not isinstance(error, BaseException) or id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, socket.gaierror | urllib3.exceptions.NameResolutionError):
            return True
        # requests wraps urllib3's MaxRetryError, whose reason wraps the resolver's error.
        pending += [error.__cause__, error.__context__, getattr(error, "reason", None)]
        pending += list(error.args)
    return False


def fetch(
    url: str,
    *,
    params: Mapping[str, str] | None = None,
    retries: int | None = None,
    backoff: float | None = None,
    max_delay: float | None = None,
) -> bytes:
    """GET `url` and return the body, retrying what is worth retrying.

    Connection errors, timeouts, HTTP 429 and 5xx are retried under the `RetryPolicy`, a
    429/503 `Retry-After` honoured (within its cap). Other 4xx fail at once.
    """
    policy = RetryPolicy.from_settings(retries=retries, backoff=backoff, max_delay=max_delay)
    headers = {"User-Agent": settings.INGEST_USER_AGENT}
    timeout = settings.ARXIV_HTTP_TIMEOUT_SECONDS

    def attempt() -> bytes | Retry:
        try:
            # Streamed, so that an endless or enormous body is cut off at the cap.
            with requests.get(
                url, params=params, headers=headers, timeout=timeout, stream=True
            ) as response:
                status = response.status_code
                if status < 400:
                    return _capped_body(response, url=url)
                if status != 429 and status < 500:
                    raise IngestError(f"Could not fetch {url}: HTTP {status} {response.reason}")
                return Retry(f"HTTP {status} {response.reason}", after=_retry_after(response))
        except _RETRYABLE_ERRORS as exc:
            if _unresolved_host(exc):
                host = urllib3.util.parse_url(url).host
                raise FetchError(
                    f"Could not fetch {url}: the host name {host} does not resolve (no "
                    "network, or a wrong address in the settings)."
                ) from exc
            return Retry(f"{type(exc).__name__}: {exc}")
        except requests.RequestException as exc:  # a bad URL and the like: retrying won't help
            raise IngestError(f"Could not fetch {url}: {exc}") from exc

    return policy.run(
        attempt,
        what=f"Fetching {url}",
        gave_up=lambda attempts, problem: (
            f"Could not fetch {url} after {attempts} attempts: {problem}"
        ),
    )


def too_large(source: str, size: int | str) -> IngestError:
    limit = settings.ARXIV_MAX_FEED_BYTES
    return IngestError(
        f"{source} is larger than {limit:,} bytes ({size}), far past any arXiv feed: refused "
        "(ARXIV_MAX_FEED_BYTES)."
    )


def _capped_body(response: requests.Response, *, url: str) -> bytes:
    """The body, decompressed, refused once it passes ARXIV_MAX_FEED_BYTES (a gzip bomb too)."""
    limit = settings.ARXIV_MAX_FEED_BYTES
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(url, f"{int(declared):,} bytes declared")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=1 << 16):
        size += len(chunk)
        if size > limit:
            raise too_large(url, "and counting")
        chunks.append(chunk)
    return b"".join(chunks)


class _Throttle:
    """At most one arXiv API request per ARXIV_API_DELAY_SECONDS in this process.

    arXiv's API terms ask for one request every three seconds; the ingest queue runs at
    concurrency 1, so a per-process clock is enough.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: float | None = None

    def wait(self) -> None:
        with self._lock:
            delay = float(settings.ARXIV_API_DELAY_SECONDS)
            if self._last is not None:
                remaining = self._last + delay - time.monotonic()
                if remaining > 0:
                    _sleep(remaining)
            self._last = time.monotonic()


_api_throttle = _Throttle()


def fetch_api(params: Mapping[str, str], *, date: dt.date | None = None) -> ParsedFeed:
    """One throttled API request, parsed; the API's empty-page glitch is retried like a 503."""

    def attempt() -> ParsedFeed | Retry:
        _api_throttle.wait()
        parsed = parse_api(fetch(settings.ARXIV_API_URL, params=params), date=date)
        if parsed.is_empty_page:
            return Retry(f"an empty page ({parsed.total_results} results expected)")
        return parsed

    return RetryPolicy.from_settings().run(
        attempt,
        what="The arXiv API request",
        gave_up=lambda attempts, problem: (
            f"The arXiv API kept returning empty pages ({attempts} attempts) for {dict(params)}."
        ),
    )

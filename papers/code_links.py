"""Links to a paper's code or data, found in its arXiv comments and abstract: the paper page's
"Code" link, and the marker beside a listed paper.

Only addresses on known code and data hosts are taken, and each is rebuilt from its parts
rather than passed on as written, because the text is the submitter's: ``javascript:`` or
``data:`` never match (only http, https or no scheme at all), a lookalike host
(``github.com.example.org``, ``evil-github.com``, ``github.com@example.org``) is not the host,
a port or a user name drops the address, and the full stop or bracket that ends the sentence
around an address is not part of it. What is kept is ``https://host/path``: no query or
fragment, the path's characters a URL may hold unquoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from .models import Paper

# Hosts of code, models and data sets; their subdomains too (gist.github.com, x.github.io).
HOSTS = (
    "github.com",
    "github.io",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "huggingface.co",
    "zenodo.org",
    "sr.ht",
    "sourceforge.net",
    "gitee.com",
)
MAX_LINKS = 5
# A hostile abstract may be 600 kB: addresses are looked for in its start only, as the
# highlighting reads only its first 20,000 characters (market/term_links.py).
MAX_SCANNED = 20_000

# An address as written in running text or TeX (``\url{…}``, ``\href{…}{…}``): with a scheme,
# or a bare known host (not inside another address: ``ftp://github.com/…``,
# ``example.org/github.com/…``). Stops at whitespace, quotes, angle brackets and TeX's braces.
_ADDRESS = re.compile(
    r"(?:(?<![\w.@/:-])(?:https?://)?(?:[\w-]+\.)*(?:"
    + "|".join(re.escape(host) for host in HOSTS)
    + r")|https?://)[^\s<>\"'{}\\|^`]*",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?'\"*"
_PATH = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")
_PAIRS = {")": "(", "]": "["}


@dataclass(frozen=True)
class CodeLink:
    url: str  # https://host/path, rebuilt
    label: str  # host/path, as a reader recognises it

    @property
    def host(self) -> str:
        return self.label.split("/", 1)[0]


def _trimmed(address: str) -> str:
    """The address without the sentence's punctuation after it: a closing bracket is kept
    only when the address opened it (Wikipedia-style paths)."""
    while address:
        last = address[-1]
        unopened = last in _PAIRS and address.count(last) > address.count(_PAIRS[last])
        if last not in _TRAILING and not unopened:
            break
        address = address[:-1]
    return address


def _known_host(host: str) -> bool:
    return any(host == known or host.endswith("." + known) for known in HOSTS)


def link_of(address: str) -> CodeLink | None:
    """The code link an address written in a text stands for, or None."""
    address = _trimmed(address)
    if not re.match(r"https?://", address, re.IGNORECASE):
        address = "https://" + address
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:  # a port that is no number, a bracketed host that is no IP
        return None
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    if parts.username is not None or port is not None or not _known_host(host):
        return None
    path = parts.path.rstrip("/")
    if not path.strip("/") or not _PATH.fullmatch(path):
        return None  # a host alone is no one's code; odd characters are no address
    return CodeLink(url=f"https://{host}{path}", label=f"{host}{path}")


def found_in(*texts: str) -> list[CodeLink]:
    """The code links in the texts, in the order written, each once, at most MAX_LINKS."""
    links: dict[str, CodeLink] = {}
    for text in texts:
        scanned = text[:MAX_SCANNED]
        # Every address has a scheme or a known host in it: most abstracts have neither, and
        # looking for those few words costs a tenth of the expression's scan.
        lowered = scanned.lower()
        if "http" not in lowered and not any(host in lowered for host in HOSTS):
            continue
        for match in _ADDRESS.finditer(scanned):
            link = link_of(match.group(0))
            if link is not None and link.url.lower() not in links:
                links[link.url.lower()] = link
                if len(links) == MAX_LINKS:
                    return list(links.values())
    return list(links.values())


def of_paper(paper: Paper) -> list[CodeLink]:
    """A paper's code links: its comments first (where arXiv submitters usually put them),
    then its abstract."""
    return found_in(paper.comment or "", paper.abstract or "")

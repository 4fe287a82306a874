"""What the security tests look at: the state a refused request must not change, and the active
content (scripts, event handlers, ``javascript:`` links) that no hostile input may produce.
(Forms are read as a browser submits them by ``tests.html.Page.form``.)"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from django.contrib.auth import get_user_model

from accounts.models import Preferences
from market.models import TermProposal
from papers.models import Watch
from tests.market.state import market_state


def site_state() -> dict[str, object]:
    """Everything a refused request must leave as it was: people, money, shares, watches and
    preferences, and term proposals."""
    return market_state() | {
        "users": list(
            get_user_model()
            .objects.order_by("pk")
            .values_list("pk", "username", "email", "password", "is_staff", "is_active")
        ),
        "watches": sorted(Watch.objects.values_list("user_id", "category_id")),
        "preferences": sorted(
            Preferences.objects.values_list("user_id", "daily_digest", "public_trader_page")
        ),
        "proposals": sorted(TermProposal.objects.values_list("user_id", "phrase")),
    }


# Active content ----------------------------------------------------------------------------

# Attributes whose value a browser may load or navigate to.
URL_ATTRIBUTES = frozenset(
    {"href", "src", "xlink:href", "action", "formaction", "data", "poster", "background", "srcset"}
)
# Elements that run or embed something whatever their attributes say.
ACTIVE_ELEMENTS = frozenset(
    {"iframe", "frame", "frameset", "object", "embed", "applet", "base", "maction", "portal"}
)
# The site's own scripts: its static files and the admin's translation catalogue.
SITE_SCRIPTS = ("/static/", "/admin/jsi18n/")
DANGEROUS_SCHEMES = ("javascript:", "vbscript:", "data:text/html", "data:application")
# Browsers ignore ASCII whitespace and control characters inside a URL's scheme.
_IGNORED_IN_SCHEME = re.compile(r"[\x00-\x20\x7f]+")


@dataclass
class PageReport:
    """The active content found in a page, and its text as a reader sees it."""

    problems: list[str] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    attribute_values: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.text_parts)


class _ActiveContentFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.report = PageReport()
        self._in_script = False
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs)
        if tag == "script":
            self._in_script = True
        elif tag == "style":
            self._in_style = True

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        elif tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            if data.strip():
                self.report.problems.append(f"inline script: {data.strip()[:80]!r}")
        elif not self._in_style:
            self.report.text_parts.append(data)

    def _check(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        problems = self.report.problems
        values = {name: value or "" for name, value in attrs}
        self.report.attribute_values.extend(values.values())
        if tag == "script" and not values.get("src", "").startswith(SITE_SCRIPTS):
            problems.append(f"script element {attrs!r}")
        if tag in ACTIVE_ELEMENTS:
            problems.append(f"<{tag}> element {attrs!r}")
        if tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            problems.append(f"meta refresh {attrs!r}")
        for name, value in values.items():
            if name.startswith("on"):
                problems.append(f"event handler {name}={value!r} on <{tag}>")
            if name == "srcdoc":
                problems.append(f"srcdoc on <{tag}>")
            if name in URL_ATTRIBUTES:
                scheme = _IGNORED_IN_SCHEME.sub("", value).lower()
                if scheme.startswith(DANGEROUS_SCHEMES):
                    problems.append(f"{name}={value!r} on <{tag}>")
            if name == "style" and re.search(r"expression\(|javascript:", value, re.I):
                problems.append(f"style={value!r} on <{tag}>")


def inspect_html(markup: str) -> PageReport:
    finder = _ActiveContentFinder()
    finder.feed(markup)
    finder.close()
    return finder.report


def active_content(markup: str) -> list[str]:
    """What in this HTML could run script: empty for an inert page."""
    return inspect_html(markup).problems

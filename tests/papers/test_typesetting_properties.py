"""Property-based tests for papers.typesetting: whatever the input, the output is well-formed,
already sanitised, and keeps the words of the prose."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from papers.typesetting import sanitize, tex_to_html, tex_to_text
from tests.html import Page
from tests.papers.test_typesetting import ALLOWED_TAGS

EXAMPLES = settings(max_examples=200, deadline=None)


class _StrictChecker(HTMLParser):
    """Every start tag must be closed, in order; no self-closing or void elements; no unknown
    tags, event handlers or non-http(s) links.  Collects the text outside <math>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.outside: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.errors.append(f"tag {tag}")
        for name, value in attrs:
            if name.startswith("on") or name in {"style", "src"}:
                self.errors.append(f"attribute {name}")
            if name == "href" and not (value or "").startswith(("http://", "https://")):
                self.errors.append(f"href {value}")
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.errors.append(f"self-closing {tag}")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if "math" not in self.stack:
            self.outside.append(data)

    def handle_comment(self, data: str) -> None:
        self.errors.append("comment")

    def handle_decl(self, decl: str) -> None:
        self.errors.append("declaration")


def check(out: str) -> str:
    checker = _StrictChecker()
    checker.feed(out)
    checker.close()
    assert not checker.errors, (checker.errors, out)
    assert not checker.stack, (checker.stack, out)
    assert sanitize(out) == out
    return "".join(checker.outside)


# Fragments that exercise every special path of the scanner, glued together at random.
TEX_BITS = st.sampled_from(
    [
        "\\", "{", "}", "$", "$$", "~", "^", "_", "%", "&", "#", "<", ">", '"', "'", "`", "-",
        "--", "\n", "\n  ", " ", "x", "5", "é", "\\emph{", "\\em ", "\\bf", "\\'", '\\"',
        "\\c", "\\v{", "\\i", "\\ss", "\\foo", "\\(", "\\)", "\\[", "\\]", "\\url{", "\\href{",
        "https://x.org/", "javascript:", "\\frac{", "\\sqrt", "\\left(", "\\right)", "\\text{",
        "<script>", "<math>", "<a href=", "onload=", "&amp;", "&#x3c;", "\\$", "US$", "\\sim",
        "{}^{3}", "{,}", "\x00", "\u202e", "\U0001d4aa",
    ]
)  # fmt: skip
tex_soup = st.lists(TEX_BITS, max_size=40).map("".join)


@EXAMPLES
@given(tex_soup)
def test_never_raises_and_is_well_formed_on_tex_soup(source: str) -> None:
    check(tex_to_html(source))
    check(tex_to_html(source, paragraphs=False))
    assert isinstance(tex_to_text(source), str)


@EXAMPLES
@given(st.text(max_size=200))
def test_never_raises_and_is_well_formed_on_any_text(source: str) -> None:
    check(tex_to_html(source))
    text = tex_to_text(source)
    assert "\n" not in text


# Prose words (no TeX meaning) and small formulas, separated by spaces.
WORD = st.from_regex(r"[A-Za-z]{1,10}", fullmatch=True).filter(
    # "http…" could start a URL and would then be a link, still shown but worth keeping simple
    lambda w: not w.lower().startswith("http")
)
PUNCT = st.sampled_from([".", ",", ";", ":", "!", "?", "(", ")", "%", "50%", "3.5", "42", "-"])
MATH = st.sampled_from(
    [
        "$x$", "$a^2$", "$\\alpha$", "$10^{-3}$", "$x_i$", "$\\frac{1}{2}$", "$\\sim 5$",
        "$3\\times 10^{5}$", "$\\mathrm{GeV}$", "$n$", "$\\foo$",
    ]
)  # fmt: skip
TOKEN = st.one_of(WORD.map(lambda w: ("word", w)), PUNCT.map(lambda p: ("punct", p)),
                  MATH.map(lambda m: ("math", m)))  # fmt: skip


@EXAMPLES
@given(st.lists(TOKEN, min_size=1, max_size=40))
def test_keeps_every_prose_word(tokens: list[tuple[str, str]]) -> None:
    source = " ".join(value for _kind, value in tokens)
    out = tex_to_html(source)
    outside = check(out)
    outside_words = set(re.findall(r"[A-Za-z]+", outside))
    for kind, value in tokens:
        if kind == "word":
            assert value in outside_words, (value, source, out)
    # Every formula is either MathML or shown as source: no formula vanishes.
    formulas = sum(1 for kind, _ in tokens if kind == "math")
    page = Page.parse(out)
    assert len(page.select("math")) + len(page.select("code", cls="tex")) == formulas
    text = tex_to_text(source)
    for kind, value in tokens:
        if kind == "word":
            assert value in text


@EXAMPLES
@given(tex_soup)
def test_sanitize_is_idempotent(source: str) -> None:
    once = sanitize(source)
    assert sanitize(once) == once


def _shown(out: str) -> tuple[str, int]:
    """The text a reader sees outside formulas and TeX source, and how many formulas (typeset
    or shown as source) the page has."""
    check(out)
    page = Page.parse(out)
    formulas = len(page.select("math")) + len(page.select("code", cls="tex"))
    # Our own output, so a pattern finds the source shown (no nesting inside <code>).
    return check(re.sub(r'<code class="tex">[^<]*</code>', " ", out)), formulas


# Money as arXiv authors write it, and formulas that a re-indented record wraps inside.
MONEY = st.sampled_from(["$5", "$0.031", "$10", "$3.50"])
WRAPPED = st.sampled_from(
    ["$\\hat\n        q$", "$D_j, j:=1,\n        ..., M$", "$x \\le\n  1$", "$\\mathcal\n   L X$"]
)
WITH_MONEY = st.one_of(
    TOKEN,
    MONEY.map(lambda m: ("money", m)),
    WRAPPED.map(lambda m: ("math", m)),
)


def _words_kept_and_formulas_counted(tokens: list[tuple[str, str]]) -> tuple[str, str]:
    """Typeset the ``tokens`` joined by spaces and check that every word is still shown and
    every formula became one; the source, and the text shown outside the formulas."""
    source = " ".join(value for _kind, value in tokens)
    outside, formulas = _shown(tex_to_html(source))
    outside_words = set(re.findall(r"[A-Za-z]+", outside))
    for kind, value in tokens:
        if kind == "word":
            assert value in outside_words, (value, source, outside)
    assert formulas == sum(1 for kind, _ in tokens if kind == "math"), (source, outside)
    return source, outside


@EXAMPLES
@given(st.lists(WITH_MONEY, min_size=1, max_size=40))
def test_money_keeps_its_dollars_and_formulas_lose_theirs(tokens: list[tuple[str, str]]) -> None:
    source, outside = _words_kept_and_formulas_counted(tokens)
    # A lone "$" on the page is one the source had as money, never a formula's.
    assert outside.count("$") == sum(1 for kind, _ in tokens if kind == "money"), (source, outside)


# A formula whose author left out the opening sign, glued to the word before it as arXiv has them.
OPENLESS = st.sampled_from(
    [r"\alpha_{s}^2$", r"\Gamma_1=2.6$", r"x^{2}$", r"\foo{x}^2$", r"\Delta m=0.8\pm" "\n1.7$"]
)
WITH_OPENLESS = st.one_of(TOKEN, OPENLESS.map(lambda m: ("math", m)))


@EXAMPLES
@given(st.lists(WITH_OPENLESS, min_size=1, max_size=40))
def test_a_missing_dollar_costs_no_word_and_leaves_no_dollar(
    tokens: list[tuple[str, str]],
) -> None:
    source, outside = _words_kept_and_formulas_counted(tokens)
    assert "$" not in outside, (source, outside)

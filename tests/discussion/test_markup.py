"""Hostile text rendered safely and quickly: scripts, huge bodies, a thousand dollars, unknown
macros, right-to-left and zero-width characters, ten thousand nested quotes."""

from __future__ import annotations

import pytest

from discussion import markup
from tests.html import Page


def rendered(text: str) -> Page:
    return Page.parse(f"<div>{markup.render(text)}</div>")


def tags(text: str) -> set[str]:
    return {element.tag for element in rendered(text).iter()}


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '[x](https://a.org/"onmouseover="alert(1))',
        "`</code><script>alert(1)</script>`",
        "$</math><script>alert(1)</script>$",
        "<svg><script>alert(1)</script></svg>",
        "**<b onclick=x>bold</b>**",
        "```\n<iframe src=//evil>\n```",
    ],
)
def test_markup_never_reaches_the_page(text):
    found = rendered(text)
    assert not tags(text) & {"script", "img", "iframe", "svg", "b"}
    for element in found.iter():
        assert not any(name.startswith("on") for name in element.attrs), element.attrs
        assert not element.get("href", "").startswith("javascript:")


def test_what_a_writer_may_use():
    found = rendered(
        "Para *em* **strong** `code` [link](https://example.org/a?b=1&c=2)\n\n"
        "> a quote\n\n- one\n- two\n\n1. first\n\n```\nblock\n```\n\n$\\alpha + 1$"
    )
    assert {"p", "em", "strong", "code", "a", "blockquote", "ul", "ol", "li", "pre", "math"} <= {
        element.tag for element in found.iter()
    }
    link = found.one("a")
    assert link.get("href") == "https://example.org/a?b=1&c=2"
    assert link.get("rel") == "ugc nofollow"


def test_a_formula_it_cannot_typeset_shows_its_source_and_the_rest_stays():
    found = rendered("Before $\\undefinedmacro{x}$ after $x^2$ end")
    assert "$\\undefinedmacro{x}$" in found.text
    assert "Before" in found.text and "end" in found.text
    assert len(found.select("math")) == 1


def quickly(text: str) -> str:
    """Rendered, and no larger than a bounded multiple of the text (each scan is bounded:
    discussion.markup; the time it takes is measured in bench/discussion.py, not here)."""
    html = markup.render(text)
    assert len(html) <= 40 * len(text) + 200
    return html


def test_a_thousand_dollars():
    html = quickly("$" * 1000)
    assert "<math" not in html
    many = quickly("$x$ " * 1000)
    assert many.count("<math") == markup.MAX_FORMULAS
    assert many.count('class="tex"') == 1000 - markup.MAX_FORMULAS


def test_ten_thousand_nested_quotes():
    html = quickly(">" * 10_000 + " deep")
    assert html.count("<blockquote>") == markup.MAX_QUOTE_DEPTH
    assert "deep" in html
    lines = quickly("\n".join(">" * depth + f" line {depth}" for depth in range(1, 3000)))
    assert lines.count("<blockquote>") <= markup.MAX_QUOTE_DEPTH
    assert "line 2999" in lines


def test_huge_and_pathological_bodies():
    for text in (
        "a" * 200_000,
        "*a " * 20_000,
        "**a " * 20_000,
        "`a " * 20_000,
        "[a" * 20_000,
        "_a " * 20_000,
        "https://" * 5_000,
        "- " * 20_000,
        "\n".join("- item" for _ in range(20_000)),
    ):
        quickly(text)


def test_right_to_left_and_zero_width_characters():
    html = markup.render("abc\u202edcba\u202c and \u200bzero\u200dwidth שלום")
    assert "\u202e" not in html and "\u202c" not in html  # no override can flip the page
    assert "שלום" in html and "zero\u200dwidth" in html

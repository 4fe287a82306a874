"""Text-mode TeX goes through pylatexenc's latex2text; the structure around it stays ours.

Pure: no database, no Django.
"""

from __future__ import annotations

import pytest
from pylatexenc.latex2text import LatexNodes2Text, get_default_latex_context_db

from papers.typesetting import symbols as typesetting_symbols
from papers.typesetting import tex_to_html, tex_to_text
from tests.html import Page

PYLATEXENC = LatexNodes2Text()

ACCENTS = ["'", "`", '"', "^", "~", "=", ".", "c", "v", "u", "r", "H", "k", "d", "b"]


@pytest.mark.parametrize("accent", ACCENTS)
def test_accents_are_pylatexencs(accent: str) -> None:
    for base in "aAcCeEgGiIkKnNoOsSuUzZ":
        source = f"\\{accent}{{{base}}}"
        assert tex_to_text(source) == PYLATEXENC.latex_to_text(source), source


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Symbols our old tables never had, which pylatexenc knows.
        (r"costs 5\textyen{} or 3\textcent", "costs 5¥ or 3¢"),
        (r"Ma\ng{} and {\dh}", "Maŋ and ð"),
        (r"the \hat{o} vowel", "the ô vowel"),
        # Maths written outside $…$ still reads as maths, with the author's spaces.
        (r"\alpha particles \to nuclei", "α particles → nuclei"),
        # LaTeX's single quotes, which pylatexenc drops; the space after \lq is TeX's.
        (r"a \lq local trace\rq, and \lq that\rq", "a ‘local trace’, and ‘that’"),
    ],
    ids=["currency-symbols", "letters", "math-accent-in-text", "math-symbols-in-text", "quotes"],
)
def test_text_mode_macros_pylatexenc_knows(source: str, expected: str) -> None:
    assert tex_to_text(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # pylatexenc reads % as a comment and every $ as maths; abstracts mean neither.
        ("improves by 50% over US$5 baselines", "improves by 50% over US$5 baselines"),
        (r"a $5 million grant for $\alpha$ tests", "a $5 million grant for α tests"),
        # Where pylatexenc would write "<cit.>", a/b or today's date, the source is shown.
        (r"as in \cite{lamport98} and \today", r"as in \cite{lamport98} and \today"),
        (r"ratio \frac{a}{b} kept", r"ratio \frac{a}{b} kept"),
    ],
    ids=["percent-and-currency", "currency-then-math", "placeholders", "fractions"],
)
def test_no_text_is_dropped_or_reinterpreted(source: str, expected: str) -> None:
    assert tex_to_text(source) == expected


def test_plain_text_for_search_feeds_and_titles_is_readable_unicode_never_mathml() -> None:
    title = (
        r"Schr\"{o}dinger bounds: $\epsilon$-nets in $\mathbb{R}^{3}$ with "
        r"$n \le 10^{-3}$ at 95\% confidence"
    )
    text = tex_to_text(title)
    assert text == "Schrödinger bounds: ε-nets in ℝ³ with n ≤ 10⁻³ at 95% confidence"
    assert "<" not in text
    # The HTML of the same title carries the formulas as MathML, the text never does.
    assert len(Page.parse(tex_to_html(title, paragraphs=False)).select("math")) == 3


def test_every_override_is_one_pylatexenc_lacks_or_renders_differently() -> None:
    """The overrides must not repeat what pylatexenc already gives (issue 18)."""
    context = get_default_latex_context_db().filter_context(
        keep_categories=["latex-base", "nonascii-specials", "advanced-symbols"]
    )
    pylatexenc = LatexNodes2Text(latex_context=context)
    for name, text in typesetting_symbols.OVERRIDES.items():
        known = context.get_macro_spec(name) is not None
        assert not known or pylatexenc.latex_to_text("\\" + name) != text, name

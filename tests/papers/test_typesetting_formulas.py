"""Where the formulas are (papers.typesetting.formulas), seen on the rendered page: misplaced and
unbalanced dollars, formulas across line breaks, money, and maths written without dollars.

Every source here is written for these tests in the shape of a real arXiv abstract; the rule
they pin is the reader's: no stray ``$`` beside a formula, no formula shown twice, no word of
the prose lost into maths, and a formula that cannot be typeset shown once, whole, as its TeX.
"""

from __future__ import annotations

import pytest

from papers.typesetting import tex_to_html, tex_to_text
from tests.html import Page
from tests.papers.test_typesetting import Case, assert_case

CASES = [
    # --- a formula glued to a letter is still a formula -------------------------------------
    Case("space-group-after-letter", r"the monoclinic (P$2_{1}/c$) phase", 1,
         "the monoclinic (P[M]) phase", ("21/c",)),
    Case("digit-formula-after-letters", r"the problem (SAT$3$) is hard", 1,
         "the problem (SAT[M]) is hard", ("3",)),
    # --- misplaced dollars: the formula is what the author marked, the rest is text ----------
    Case("dollar-before-the-error-bar", r"scores of $0.91 \pm $0.03 and $0.88 \pm $0.05 on", 2,
         "scores of [M]0.03 and [M]0.05 on", ("0.91±", "0.88±")),
    # --- an unbalanced dollar: its formula is found, the rest pairs as the author meant ------
    Case("closing-dollar-without-opening",
         r"grows like \mathcal{O}(\beta^{3})$ at large coupling. At the order"
         r" $\mathcal{O}(\beta^3)$, new terms appear for $t$-channel exchange", 3,
         "grows like [M] at large coupling. At the order [M], new terms appear for [M]-channel"
         " exchange", ("𝒪(β3)", "𝒪(β3)", "t")),
    Case("closing-dollar-after-a-line-break",
         "the widths $\\Delta m_1=0.4\\pm 0.2$, \\Delta m_2=0.3\\pm\n0.1$ and $\\Delta m_3=1.1$"
         " are fitted with $\\chi^2=3.2$ in total.", 4,
         "the widths [M], [M] and [M] are fitted with [M] in total.",
         ("Δm1=0.4±0.2", "Δm2=0.3±0.1", "Δm3=1.1", "χ2=3.2")),
    Case("opening-dollar-without-closing", r"the coupling $\alpha_s^2 grows with the energy", 1,
         "the coupling [M] grows with the energy", ("αs2",)),
    Case("unconvertible-half-delimited-formula-shown-once",
         r"bounded by \foo{x}^2$ in the limit and $y$ later", 1,
         r"bounded by \foo{x}^2$ in the limit and [M] later", ("y",),
         has=(r'<code class="tex">\foo{x}^2$</code>',)),
    # --- a line break inside a formula, indented or not, is part of it -----------------------
    Case("formula-across-an-indented-line", "known as the $\\hat\n        k$ or jet parameter",
         1, "known as the [M] or jet parameter", ("k^",), lacks=("<p>",)),
    Case("formula-across-indented-lines-keeps-the-words",
         "Let $N$ be the number of grains $G_i, i:=1,\n        ..., N$ having radius $r$ and"
         " mass $m \\ll\n        1$ each.", 4,
         "Let [M] be the number of grains [M] having radius [M] and mass [M] each.",
         ("N", "Gi,i:=1,...,N", "r", "m≪1")),
    Case("blank-line-ends-even-a-formula", "costs $x\n\nand $y$ more", 1,
         "costs $xand [M] more", ("y",), has=('<p>costs $x</p><p>and <math alttext="y">',)),
    # --- money stays as written ---------------------------------------------------------------
    Case("money-price-each", "labelled at $0.02 per image, we show", 0,
         "labelled at $0.02 per image, we show"),
    Case("money-then-formula", r"costs $5 and scales as $n^2$ here", 1,
         "costs $5 and scales as [M] here", ("n2",)),
    # --- maths written without dollars --------------------------------------------------------
    Case("maths-accent-on-greek-without-dollars", r"fields \phi and \bar\phi, and \hat\psi", 0,
         "fields φ and φ\u0305, and ψ\u0302", lacks=("\\bar", "\\hat")),
    Case("script-without-dollars", r"the momenta p^\nu (with \nu = 0, 1) and \eta here", 1,
         "the momenta [M] (with ν = 0, 1) and η here", ("pν",)),
    Case("angle-brackets-la-ra", r"the mean radius \la x^2\ra_s=0.41\pm 0.02 fm^2 is", 1,
         "the mean radius [M] is", ("⟨x2⟩s=0.41±0.02fm2",)),
    Case("unknown-macro-in-dollarless-maths-shown-whole", r"with \zz r^2_s=0.5 today", 0,
         r"with \zz r^2_s=0.5 today", has=(r'<code class="tex">\zz r^2_s=0.5</code>',)),
    Case("equation-environment", r"solve \begin{equation*} u_t = \Delta u \end{equation*} for",
         1, "solve [M] for", ("ut=Δu",), has=('<math display="block" alttext="',)),
    Case("label-and-comment-in-an-equation",
         "solve \\begin{equation}\\label{heat} u_t = \\Delta%\n  u \\end{equation} now", 1,
         "solve [M] now", ("ut=Δu",)),
    Case("dollars-inside-an-environment-are-its-own",
         r"solve \begin{equation} u_t = \Delta u \tag{$H_p$} \end{equation} where $u$ is real", 2,
         "solve [M] where [M] is real", ("ut=Δu", "u")),
    Case("not-without-dollars", r"we write a \not\mid b and c \not= d", 0,
         "we write a ∤ b and c ≠ d"),
    Case("spelt-out-words-with-scripts-stay-text", "the phi^4 model over 0.85 deg^2 of sky", 0,
         "the phi^4 model over 0.85 deg^2 of sky"),
    Case("words-with-underscores-are-no-maths", r"the snake_case name and \_x stay", 0,
         "the snake_case name and _x stay"),
    Case("url-with-script-is-no-maths", r"see https://x.org/a^2_b for the code", 0,
         "see https://x.org/a^2_b for the code"),
    Case("texttt-with-underscore-is-no-maths", r"call \texttt{f_1} twice", 0, "call f_1 twice"),
    Case("accent-command-is-no-script", r"Lema\^{\i}tre and Gr\"uneisen", 0,
         "Lemaître and Grüneisen"),
    Case("paren-delimiters-untouched", r"so \(a_1^2\) and \[b_2\] hold", 2, "so [M] and [M] hold",
         ("a12", "b2")),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_formulas(case: Case) -> None:
    assert_case(case)


def test_a_stray_dollar_leaves_the_formulas_after_it_alone() -> None:
    # One sign too few early on used to flip every later formula into prose and the prose
    # between them into formulas.
    source = (
        r"the rate \Gamma_1=2.6$ keV dominates. We fit $a$, $b$ and $c$ to the data and quote"
        r" $\chi^2/\nu=1.1$ for the best model."
    )
    page = Page.parse(tex_to_html(source))
    assert len(page.select("math")) == 5
    assert "$" not in page.text
    for words in ("keV dominates. We fit", "to the data and quote", "for the best model."):
        assert words in page.text


def test_formulas_across_lines_in_plain_text() -> None:
    assert tex_to_text("the $\\hat\n      k$ rate") == "the \\hat k rate"
    assert tex_to_text(r"(P$2_{1}/c$) phase") == "(P2₁/c) phase"
    assert tex_to_text(r"scores of $0.91 \pm $0.03 here") == "scores of 0.91 ±0.03 here"
    assert tex_to_text(r"the radius \la x^2\ra_s=0.41 fm^2 is") == "the radius ⟨x²⟩_s=0.41 fm² is"

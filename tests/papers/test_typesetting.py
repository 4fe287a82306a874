"""Table-driven tests for papers.typesetting (pure: no database, no Django).

Each case looks at the parsed output rather than at raw strings, so that the table says what a
reader would see: how many formulas there are, the text around them (each formula shown as
``[M]``) and the text inside each formula.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from papers.typesetting import TYPESETTER_VERSION, sanitize, tex_to_html, tex_to_text
from tests.html import Page

NBSP = "\u00a0"

ALLOWED_TAGS = {
    "p", "em", "strong", "code", "span", "a", "math", "mrow", "mi", "mn",
    "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot",
    "mstyle", "mtable", "mtr", "mtd", "munder", "mover", "munderover", "mmultiscripts",
    "mprescripts", "none", "mpadded", "mphantom", "menclose", "merror",
}  # fmt: skip


@dataclass
class Rendered:
    html: str
    maths: int = 0
    outside: str = ""
    inside: tuple[str, ...] = ()
    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)


class _Reader(HTMLParser):
    """Splits rendered HTML into text outside maths, text inside each <math> (the TeX is an
    attribute, not text) and the list of tags with their attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outside: list[str] = []
        self.inside: list[list[str]] = []
        self.math_depth = 0
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "math":
            if self.math_depth == 0:
                self.inside.append([])
                self.outside.append("[M]")
            self.math_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "math":
            self.math_depth -= 1

    def handle_data(self, data: str) -> None:
        if self.math_depth:
            self.inside[-1].append(data)
        else:
            self.outside.append(data)


def render(source: str) -> Rendered:
    out = tex_to_html(source)
    reader = _Reader()
    reader.feed(out)
    reader.close()
    return Rendered(
        html=out,
        maths=len(reader.inside),
        outside="".join(reader.outside),
        inside=tuple("".join(parts) for parts in reader.inside),
        tags=reader.tags,
    )


def assert_safe(rendered: Rendered) -> None:
    for tag, attrs in rendered.tags:
        assert tag in ALLOWED_TAGS, rendered.html
        for name, value in attrs.items():
            assert not name.startswith("on"), rendered.html
            assert name not in {"style", "src", "xlink:href"}, rendered.html
            if name == "href":
                assert tag == "a", rendered.html
                assert value is not None and value.startswith(("http://", "https://"))
            if name == "class":
                assert (tag, value) in {("span", "smallcaps"), ("code", "tex")}, rendered.html
    assert sanitize(rendered.html) == rendered.html


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    maths: int
    outside: str
    inside: tuple[str, ...] | None = None  # text of each formula, when worth pinning
    has: tuple[str, ...] = ()  # substrings of the HTML
    lacks: tuple[str, ...] = ()  # substrings the HTML must not contain


CASES = [
    # --- text mode: accents, with and without braces -----------------------------------------
    Case("acute", r"caf\'e \'{E}cole", 0, "café École"),
    Case("grave", r"\`a la \`{e}", 0, "à la è"),
    Case("umlaut-bare", r"M\"uller", 0, "Müller"),
    Case("umlaut-braced", r"J\"{u}rgen", 0, "Jürgen"),
    Case("umlaut-outer-braces", r"G{\"o}del", 0, "Gödel"),
    Case("circumflex", r"r\^ole \^{o}", 0, "rôle ô"),
    Case("tilde-accent", r"Espa\~na \~{n}", 0, "España ñ"),
    Case("cedilla", r"Fran\c{c}ois gar\c con", 0, "François garçon"),
    Case("caron", r"\v{S}imon Ko\v{s}ice \v s", 0, "Šimon Košice š"),
    Case("breve", r"Ya\u{g}mur", 0, "Yağmur"),
    Case("ring", r"\r{a} \r{U}", 0, "å Ů"),
    Case("hungarian-umlaut", r"Erd\H{o}s Sz\"oll\H{o}si", 0, "Erdős Szöllősi"),
    Case("ogonek", r"\k{a}\k{e}", 0, "ąę"),
    Case("dot-above", r"\.{Z}ab\.{z}e", 0, "Żabże"),
    Case("macron", r"\={a}\=o", 0, "āō"),
    Case("dotless-i", r"Da\u{g}l{\i} and Dağl\i", 0, "Dağlı and Dağlı"),
    Case("accent-on-dotless-i", r"Mart\'{\i}nez Ca\"\i n \^{\j}", 0, "Martínez Caïn ĵ"),
    Case("eszett", r"{\ss} Stra\ss e", 0, "ß Straße"),
    Case(
        "special-letters",
        r"\o{} \O{} \aa{} \AA{} \l{} \L{} \ae{} \AE{} \oe{} \OE{}",
        0,
        "ø Ø å Å ł Ł æ Æ œ Œ",
    ),
    Case("empty-accent-argument", r"a\~{}b \'{}", 0, "a~b ´"),
    # --- text mode: markup ------------------------------------------------------------------
    Case("emph", r"an \emph{important} result", 0, "an important result",
         has=("<em>important</em>",)),
    Case("textit", r"\textit{in vivo}", 0, "in vivo", has=("<em>in vivo</em>",)),
    Case("em-declaration", r"a {\em new} way", 0, "a new way", has=("<em>new</em>",)),
    Case("it-declaration", r"{\it et al.} said", 0, "et al. said", has=("<em>et al.</em>",)),
    Case("textbf", r"\textbf{bold}", 0, "bold", has=("<strong>bold</strong>",)),
    Case("bf-declaration", r"{\bf Bold} text", 0, "Bold text", has=("<strong>Bold</strong>",)),
    Case("texttt", r"run \texttt{make test}", 0, "run make test",
         has=("<code>make test</code>",)),
    Case("textsc", r"\textsc{Lapack}", 0, "Lapack",
         has=('<span class="smallcaps">Lapack</span>',)),
    Case("nested-markup", r"\emph{very \textbf{bold}}", 0, "very bold",
         has=("<em>very <strong>bold</strong></em>",)),
    Case("math-inside-emph", r"\emph{for all $n$}", 1, "for all [M]", ("n",),
         has=('<em>for all <math alttext="n">',)),
    # --- text mode: punctuation and specials ------------------------------------------------
    Case("tie-is-nbsp", r"Fig.~3 and J.~Smith", 0, f"Fig.{NBSP}3 and J.{NBSP}Smith",
         lacks=("~",)),
    Case("dashes", r"pages 1--10 --- and x-ray", 0, "pages 1–10 — and x-ray"),
    Case("double-quotes", r"``quoted''", 0, "“quoted”"),
    Case("single-quotes", r"`single' and it's", 0, "‘single’ and it’s"),
    Case("escaped-specials", r"\% \& \$ \_ \# \{ \}", 0, "% & $ _ # { }"),
    Case("bare-percent", "improves by 50% over all baselines", 0,
         "improves by 50% over all baselines"),
    Case("percent-then-text", r"50%\emph{x} rest", 0, "50%x rest"),
    Case("degree", r"at 300{\deg}C", 0, "at 300°C"),
    Case("html-specials-escaped", 'a < b & c > "d"', 0, 'a < b & c > "d"',
         has=("a &lt; b &amp; c &gt;",)),
    Case("whitespace-collapses", "a   lot\nof \t space\r\n", 0, "a lot of space"),
    Case("grouping-braces-vanish", r"{GPU} clusters with {CUDA}", 0, "GPU clusters with CUDA"),
    Case("unknown-macro-kept", r"the \foo{bar} method", 0, r"the \foo{bar} method"),
    Case("unknown-macro-no-arg", r"a \newcommand b", 0, r"a \newcommand b"),
    Case("unbalanced-open-brace", r"text {with open brace", 0, "text with open brace"),
    Case("unbalanced-close-brace", r"text} with close} braces", 0, "text with close braces"),
    Case("bf-declaration-to-end", r"\bf all of it", 0, "all of it",
         has=("<strong>all of it</strong>",)),
    Case("logos-and-dots", r"\LaTeX{} and \TeX\ files\ldots", 0, "LaTeX and TeX files…"),
    Case("line-break-command", r"one\\two", 0, "one two"),
    Case("lone-backslash", "ends with \\", 0, "ends with \\"),
    # --- links ------------------------------------------------------------------------------
    Case("url-https", r"code at \url{https://github.com/a/b\_c}", 0,
         "code at https://github.com/a/b_c",
         has=('<a href="https://github.com/a/b_c" rel="nofollow noopener">',)),
    Case("href-http", r"\href{http://example.org/x?a=1&b=2}{the site}", 0, "the site",
         has=('href="http://example.org/x?a=1&amp;b=2"',)),
    Case("url-ftp-is-text", r"\url{ftp://example.org/f}", 0, "ftp://example.org/f",
         lacks=("<a",)),
    Case("href-mailto-is-text", r"\href{mailto:a@b.org}{mail us}", 0, "mail us (mailto:a@b.org)",
         lacks=("<a",)),
    Case("bare-url-with-parentheses", "(see https://w.org/Foo_(bar))", 0,
         "(see https://w.org/Foo_(bar))", has=('href="https://w.org/Foo_(bar)"',)),
    Case("bare-url-linked", "see https://x.org/~me/a--b.", 0, "see https://x.org/~me/a--b.",
         has=('<a href="https://x.org/~me/a--b" rel="nofollow noopener">',)),
    # --- maths ------------------------------------------------------------------------------
    Case("times-power", r"about $3\times 10^{5}$ events", 1, "about [M] events", ("3×105",),
         has=("<mo>×</mo>", "<msup><mn>10</mn>")),
    Case("micro-unit", r"$5\,\mu\mathrm{m}$ thick", 1, "[M] thick", ("5μm",),
         has=('<mspace width="0.167em">', '<mi mathvariant="normal">m</mi>')),
    Case("prescript-empty-group", r"${}^{235}\mathrm{U}$ fission", 1, "[M] fission", ("U235",),
         has=("<mmultiscripts><mi mathvariant=\"normal\">U</mi><mprescripts></mprescripts>"
              "<none></none>",)),
    Case("prescript-before-letters", r"$^{3}He$ ions", 1, "[M] ions", ("H3e",),
         has=("<mmultiscripts><mi>H</mi>",)),
    Case("superscript-then-text", r"$^{3}$He", 1, "[M]He", ("3",)),
    Case("subscript", r"$x_{i}^{2}$ and $a_1$", 2, "[M] and [M]", ("xi2", "a1"),
         has=("<msubsup>", "<msub>")),
    Case("mathrm-word", r"$E_\mathrm{kin}$", 1, "[M]", ("Ekin",),
         has=('<mi mathvariant="normal">k</mi>',)),
    Case("mathbb-mathcal", r"$\mathbb{R}^n$ in $\mathcal{O}(n)$", 2, "[M] in [M]",
         ("ℝn", "𝒪(n)")),
    Case("operatorname", r"$\operatorname{Tr}(A)$", 1, "[M]", ("Tr(A)",),
         has=("<mi>Tr</mi>",)),
    Case("sqrt-of-frac-of-sqrt", r"$\sqrt{\frac{a}{\sqrt{b}}}$", 1, "[M]", ("ab",),
         has=("<msqrt><mfrac><mi>a</mi><msqrt><mi>b</mi></msqrt></mfrac></msqrt>",)),
    Case("frac-of-sqrt", r"$\frac{\sqrt{x}+1}{2}$", 1, "[M]", ("x+12",),
         has=("<mfrac><mrow><msqrt>",)),
    Case("left-right", r"$\left(\frac{a}{b}\right)$", 1, "[M]", ("(ab)",),
         has=('<mo stretchy="true" fence="true" form="prefix">(</mo>',)),
    Case("escaped-braces-in-math", r"$\{1, 2\}$", 1, "[M]", ("{1,2}",)),
    Case("pm", r"$1.5 \pm 0.2$", 1, "[M]", ("1.5±0.2",), has=("<mo>±</mo>",)),
    Case("approx", r"$\approx 3$", 1, "[M]", ("≈3",), has=("<mo>≈</mo>",)),
    Case("sim-is-tilde-operator", r"$\sim 10^{-3}$", 1, "[M]", ("∼10−3",),
         has=("<mo>∼</mo>",), lacks=("~",)),
    Case("le-ge", r"$a \le b \geq c$", 1, "[M]", ("a≤b≥c",)),
    Case("less-greater", r"$a<b$ and $c > d$", 2, "[M] and [M]", ("a<b", "c>d"),
         has=("<mo>&lt;</mo>", "<mo>&gt;</mo>")),
    Case("braced-comma-thousands", r"$10{,}000$ samples", 1, "[M] samples", ("10,000",),
         has=("<mn>10,000</mn>",)),
    Case("thin-space-thousands", r"$10\,000$", 1, "[M]", ("10000",), has=("<mspace",)),
    Case("braced-equals", r"$a{=}b$", 1, "[M]", ("a=b",),
         has=('<mo lspace="0" rspace="0">=</mo>',)),
    Case("greek", r"$\alpha\beta\Gamma\omega$", 1, "[M]", ("αβΓω",)),
    Case("unicode-in-math", r"$é + ü$", 1, "[M]", ("é+ü",)),
    Case("text-in-math", r"$x\ \text{and}\ y$", 1, "[M]", (f"x{NBSP}and{NBSP}y",),
         has=("<mtext>and</mtext>",)),
    Case("percent-in-math", r"$5\%$", 1, "[M]", ("5%",)),
    Case("escaped-dollar-in-math", r"$\$5$", 1, "[M]", ("$5",)),
    Case("display-dollars", r"so $$E = mc^2$$ holds", 1, "so [M] holds", ("E=mc2",),
         has=('<math display="block" alttext="E = mc^2">',)),
    Case("paren-inline", r"\(a+b\) then", 1, "[M] then", ("a+b",), lacks=('display="block"',)),
    Case("bracket-display", r"\[a+b\]", 1, "[M]", ("a+b",),
         has=('<math display="block" alttext="a+b">',)),
    Case("letters-before-math", r"H$\alpha$ lines, 1 M$_\odot$ yr$^{-1}$", 3,
         "H[M] lines, 1 M[M] yr[M]", ("α", "⊙", "−1")),
    Case("styled-letters-as-alphanumerics", r"$\bm{x}$, $\mathscr{L}$, $\mathbb{1}$", 3,
         "[M], [M], [M]", ("𝒙", "ℒ", "𝟙"), lacks=("mathvariant=\"bold", "mathvariant=\"scr")),
    Case("capital-greek-upright", r"$\Gamma(\alpha)$", 1, "[M]", ("Γ(α)",),
         has=('<mi mathvariant="normal">Γ</mi><mo stretchy="false">(</mo><mi>α</mi>',)),
    Case("overline-stretches", r"$\overline{x}$", 1, "[M]", ("x‾",),
         has=('<mo accent="true" stretchy="true">‾</mo>',)),
    Case("astronomy-macros", r"$\mathrm{H\,\textsc{i}}$ within $0\farcs5$", 2,
         "[M] within [M]", ("HI", "0″.5")),
    Case("angstrom-in-math", r"$5\,\AA$", 1, "[M]", ("5Å",)),
    # The TeX is the formula's alttext; no <semantics>/<annotation> pair, no <mrow> around
    # the whole formula or around a single child: each is an element more on a list page.
    Case("alttext-keeps-tex", r"$x^2$", 1, "[M]", ("x2",),
         has=('<math alttext="x^2"><msup><mi>x</mi><mn>2</mn></msup></math>',)),
    Case("no-row-around-one-child", r"$10^{3} < \frac{a}{b}$", 1, "[M]", ("103<ab",),
         has=('<msup><mn>10</mn><mn>3</mn></msup><mo>&lt;</mo><mfrac><mi>a</mi><mi>b</mi></mfrac>',),
         lacks=("<mrow>", "semantics", "annotation")),
    Case("fenced-group-keeps-its-row", r"$a \left( b \right) \frac{1}{2}$", 1, "[M]",
         ("a(b)12",), has=('<mi>a</mi><mrow><mo stretchy="true"',)),
    Case("operator-name-with-a-power", r"in time $O(\log^2 n)$ and $\ln^{2}(s)$", 2,
         "in time [M] and [M]", ("O(log2n)", "ln2(s)"), lacks=('class="tex"',)),
    Case("old-font-switch-written-as-a-command", r"$\cal{O}(\alpha_{s}^2)$", 1, "[M]", ("𝒪(αs2)",)),
    # --- maths that cannot be converted: TeX source shown -----------------------------------
    Case("unknown-macro-in-math", r"a $\foo{x}$ b", 0, r"a $\foo{x}$ b",
         has=(r'<code class="tex">$\foo{x}$</code>',)),
    Case("frac-missing-argument", r"$\frac{a}$", 0, r"$\frac{a}$",
         has=('<code class="tex">',)),
    Case("dangling-superscript", r"$x^$", 0, "$x^$", has=('<code class="tex">',)),
    Case("unbalanced-left", r"$\left( x$", 0, r"$\left( x$", has=('<code class="tex">',)),
    # --- dollars: currency, escapes and unbalanced delimiters -------------------------------
    Case("currency-us", "raised US$5 million", 0, "raised US$5 million"),
    Case("currency-millions", "a $5 million grant", 0, "a $5 million grant"),
    Case("currency-range", "between $5 and $10 per hour", 0, "between $5 and $10 per hour"),
    Case("currency-letter-prefix", "A$ 10 or HK$20", 0, "A$ 10 or HK$20"),
    Case("currency-then-math", r"costs $5 and $x$ grows", 1, "costs $5 and [M] grows", ("x",)),
    Case("currency-sentence", r"It costs $5. Then $x$ grows.", 1,
         "It costs $5. Then [M] grows.", ("x",)),
    Case("digit-math-is-math", r"$5$ apples and $2^{10}$ pears", 2, "[M] apples and [M] pears",
         ("5", "210")),
    Case("escaped-dollars", r"\$5 and \$10", 0, "$5 and $10"),
    Case("unbalanced-dollar", "the $x and more", 0, "the $x and more"),
    Case("odd-dollars", r"$x$ and $y", 1, "[M] and $y", ("x",)),
    Case("unbalanced-display", r"$$x + y", 0, "$$x + y"),
    Case("unbalanced-paren", r"\(x + y", 0, r"\(x + y"),
    Case("empty-math", r"a $ $ b", 0, "a $ $ b"),
    # --- hostile input ----------------------------------------------------------------------
    Case("raw-script", "<script>alert(1)</script>", 0, "<script>alert(1)</script>",
         lacks=("<script",)),
    Case("raw-img-onerror", "<img src=x onerror=alert(1)>", 0, "<img src=x onerror=alert(1)>",
         lacks=("<img",)),
    Case("raw-svg-onload", "<svg onload=alert(1)>", 0, "<svg onload=alert(1)>",
         lacks=("<svg",)),
    Case("raw-iframe", '<iframe src="//evil.example"></iframe>', 0,
         '<iframe src="//evil.example"></iframe>', lacks=("<iframe",)),
    Case("raw-style", "<style>body{display:none}</style>", 0, "<style>bodydisplay:none</style>",
         lacks=("<style",)),
    Case("raw-anchor-javascript", "<a href=javascript:alert(1)>x</a>", 0,
         "<a href=javascript:alert(1)>x</a>", lacks=("<a ",)),
    Case("href-javascript", r"\href{javascript:alert(1)}{click}", 0,
         "click (javascript:alert(1))", lacks=("<a", "href")),
    Case("href-javascript-mixed-case", r"\href{ JaVaScRiPt:alert(1)}{x}", 0,
         "x (JaVaScRiPt:alert(1))", lacks=("<a",)),
    Case("url-javascript", r"\url{javascript:alert(1)}", 0, "javascript:alert(1)",
         lacks=("<a",)),
    Case("href-attribute-breakout", r'\href{https://x.org" onmouseover="alert(1)}{x}', 0,
         'x (https://x.org" onmouseover="alert(1))', lacks=("<a",)),
    Case("url-with-tag", r"\url{https://x.org/<script>}", 0, "https://x.org/<script>",
         lacks=("<a", "<script")),
    Case("script-in-math-text", r"$\text{<script>alert(1)</script>}$", 1, "[M]",
         ("<script>alert(1)</script>",), lacks=("<script",)),
    Case("href-in-math", r"$\href{javascript:alert(1)}{x}$", 1, "[M]", ("x",),
         lacks=("href=",)),
    Case("raw-maction", '<math><maction actiontype="statusline">x</maction></math>', 0,
         '<math><maction actiontype="statusline">x</maction></math>',
         lacks=("<maction", "<math>")),
    Case("raw-mi-href", '<math><mi href="javascript:alert(1)">x</mi></math>', 0,
         '<math><mi href="javascript:alert(1)">x</mi></math>', lacks=("<mi",)),
    Case("markup-in-emph", r"\emph{<b onclick=alert(1)>x</b>}", 0,
         "<b onclick=alert(1)>x</b>", lacks=("<b ",)),
    Case("entity-text-stays-literal", "&lt;script&gt; &amp;", 0, "&lt;script&gt; &amp;",
         has=("&amp;lt;script&amp;gt;",)),
    Case("color-in-math-dropped", r"$\color{red}{x}$", 1, "[M]", ("x",),
         lacks=("mathcolor", "<mstyle mathcolor")),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_tex_to_html(case: Case) -> None:
    assert_case(case)


def assert_case(case: Case) -> None:
    """What a case says of its rendering holds, and the rendering is safe."""
    rendered = render(case.source)
    assert rendered.maths == case.maths, rendered.html
    assert rendered.outside == case.outside, rendered.html
    if case.inside is not None:
        assert rendered.inside == case.inside, rendered.html
    for fragment in case.has:
        assert fragment in rendered.html, rendered.html
    for fragment in case.lacks:
        assert fragment not in rendered.html, rendered.html
    assert_safe(rendered)


def test_case_ids_are_unique_and_plentiful() -> None:
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids)
    assert len(ids) >= 60


# --- paragraphs ---------------------------------------------------------------------------


def test_single_paragraph_is_inline() -> None:
    out = tex_to_html("We study $x$.\nThe line wrap is not a paragraph.")
    assert not out.startswith("<p>")
    assert "<p>" not in out


def test_paragraph_break_gives_paragraphs() -> None:
    out = tex_to_html("  First $x$ paragraph.\n  Second paragraph,\nwrapped.\n  Third.  ")
    assert len(Page.parse(out).select("p")) == 3
    assert out.startswith('<p>First <math alttext="x">')
    assert out.endswith("<p>Second paragraph, wrapped.</p><p>Third.</p>")


def test_blank_line_is_a_paragraph_break() -> None:
    assert tex_to_html("One.\n\nTwo.") == "<p>One.</p><p>Two.</p>"


def test_titles_can_ignore_arxiv_line_wraps() -> None:
    title = "A very long title about $\\mathrm{SU}(N)$\n  gauge theories"
    out = tex_to_html(title, paragraphs=False)
    assert "<p>" not in out
    assert out.endswith("</math> gauge theories")


def test_empty_input() -> None:
    assert tex_to_html("") == ""
    assert tex_to_html("   \n  ") == ""
    assert tex_to_text("") == ""


def test_version_is_an_int() -> None:
    assert isinstance(TYPESETTER_VERSION, int) and TYPESETTER_VERSION >= 1


# --- tex_to_text --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"Dağl{\i}", "Dağlı"),
        (r"Sz\"oll\H{o}si", "Szöllősi"),
        (r"J\"{u}rgen", "Jürgen"),
        (r"Fran\c{c}ois", "François"),
        (r"\v{S}imon", "Šimon"),
        (r"{\O}ystein", "Øystein"),
        (r"M\"uller", "Müller"),
        (r"Jos\'{e} Mart\'{\i}nez", "José Martínez"),
        (r"{\L}ukasz B{\l}a{\.z}ej", "Łukasz Błażej"),
        (r"Ha\v{s}ek, \AA{}ngstr\"om", "Hašek, Ångström"),
        ("  Ada \n  Lovelace ", "Ada Lovelace"),
    ],
    ids=[
        "dotless-i", "hungarian", "braced-umlaut", "cedilla", "caron", "slashed-o", "umlaut",
        "acute-dotless-i", "polish", "ring-and-caron", "whitespace",
    ],
)  # fmt: skip
def test_author_names(source: str, expected: str) -> None:
    assert tex_to_text(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"$3\times 10^{5}$ events", "3 × 10⁵ events"),
        (r"$\sim 10^{-3}$", "∼ 10⁻³"),
        (r"$\alpha$-decay of ${}^{235}\mathrm{U}$", "α-decay of ²³⁵U"),
        (r"$5\,\mu\mathrm{m}$", "5\u2009μm"),
        (r"$T_c$ and $x_{12}$", "T_c and x₁₂"),
        (r"$\frac{a}{b}$", r"\frac{a}{b}"),
        (r"$\foo{x}$ stays", r"\foo{x} stays"),
        (r"\emph{Deep} {\bf nets}: $10{,}000$ <b>", "Deep nets: 10,000 <b>"),
        (r"a~b", f"a{NBSP}b"),
        (r"US$5 and \$3", "US$5 and $3"),
        ("One.\n  Two.", "One. Two."),
        (r"\href{https://x.org}{site} \url{https://y.org}", "site https://y.org"),
        (r"$10\,{\rm GeV}$ and $\mathrm{km\,s^{-1}}$", "10\u2009GeV and km\u2009s⁻¹"),
        (r"$O(n\log n)$", "O(n log n)"),
        (r"$\{a, b\}$", "{a, b}"),
    ],
    ids=[
        "times", "sim", "prescript", "thin-space", "subscripts", "frac-source",
        "unknown-macro", "markup-dropped-not-escaped", "nbsp", "dollars", "paragraphs",
        "links", "old-style-fonts", "function-names", "escaped-braces",
    ],
)  # fmt: skip
def test_tex_to_text(source: str, expected: str) -> None:
    assert tex_to_text(source) == expected


# --- sanitize -----------------------------------------------------------------------------


def test_sanitize_strips_foreign_markup() -> None:
    dirty = (
        '<p onclick="x()">ok <script>alert(1)</script><img src=x onerror=y>'
        '<a href="javascript:alert(1)">j</a><a href="https://x.org">h</a>'
        '<svg><g/></svg><span class="smallcaps evil">s</span><code class="tex">c</code>'
        "<math><maction actiontype=statusline><mi>x</mi></maction></math></p>"
    )
    clean = sanitize(dirty)
    assert clean == (
        '<p>ok <a rel="nofollow noopener">j</a>'
        '<a href="https://x.org" rel="nofollow noopener">h</a>'
        '<span class="smallcaps">s</span><code class="tex">c</code>'
        "<math><mi>x</mi></math></p>"
    )
    assert sanitize(clean) == clean


# --- robustness ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    ["{" * 3000 + "deep" + "}" * 3000, "\\emph{" * 2000 + "deep", "$" + "{" * 3000 + "deep$"],
    ids=["braces", "emph", "math-braces"],
)
def test_absurd_nesting_shows_the_text_instead_of_raising(source: str) -> None:
    rendered = render(source)
    assert "deep" in rendered.outside
    assert_safe(rendered)
    assert "deep" in tex_to_text(source)


def test_formula_cache_returns_identical_output() -> None:
    source = r"$\frac{1}{2}$ and again $\frac{1}{2}$"
    first = tex_to_html(source)
    assert first == tex_to_html(source)
    assert len(Page.parse(first).select("mfrac")) == 2


def test_operator_names_get_thin_spaces_like_tex():
    html = tex_to_html(r"$O(n \log n)$ and $\log(n)$")
    assert '<mi>n</mi><mspace width="0.1667em"></mspace><mi>log</mi>' in html
    assert '<mi>log</mi><mspace width="0.1667em"></mspace><mi>n</mi>' in html
    assert "<mi>log</mi><mo" in html  # no space before a parenthesis

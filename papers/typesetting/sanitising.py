"""The HTML allowlist: what typeset output may contain, and the sanitiser that enforces it.

It lists exactly what the typesetter emits; the MathML serialiser filters attributes against
the same tables, so that sanitising our own output is a no-op.
"""

from __future__ import annotations

import nh3

MATHML_TAGS: frozenset[str] = frozenset(
    {
        "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
        "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mstyle", "mtable", "mtr", "mtd",
        "munder", "mover", "munderover", "mmultiscripts", "mprescripts", "none", "mpadded",
        "mphantom", "menclose", "merror",
    }
)  # fmt: skip
_HTML_TAGS: frozenset[str] = frozenset({"p", "em", "strong", "code", "span", "a"})

_MATHML_COMMON_ATTRS = frozenset({"mathvariant", "displaystyle", "scriptlevel", "dir"})
_MATHML_ATTRS: dict[str, frozenset[str]] = {
    "math": frozenset({"display", "xmlns", "alttext"}),
    "mo": frozenset(
        {
            "form", "fence", "separator", "stretchy", "symmetric", "largeop", "movablelimits",
            "lspace", "rspace", "minsize", "maxsize", "accent",
        }
    ),
    "mover": frozenset({"accent"}),
    "munder": frozenset({"accentunder"}),
    "munderover": frozenset({"accent", "accentunder"}),
    "mfrac": frozenset({"linethickness"}),
    "mspace": frozenset({"width", "height", "depth"}),
    "mpadded": frozenset({"width", "height", "depth", "lspace", "voffset"}),
    "mtable": frozenset(
        {"columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines"}
    ),
    "mtr": frozenset({"columnalign", "rowalign"}),
    "mtd": frozenset({"columnalign", "rowalign", "columnspan", "rowspan"}),
    "menclose": frozenset({"notation"}),
}  # fmt: skip


def _allowed_attrs(tag: str) -> frozenset[str]:
    return _MATHML_ATTRS.get(tag, frozenset()) | _MATHML_COMMON_ATTRS


ATTRS_BY_TAG: dict[str, frozenset[str]] = {tag: _allowed_attrs(tag) for tag in MATHML_TAGS}

_CLEANER = nh3.Cleaner(
    tags=set(MATHML_TAGS | _HTML_TAGS),
    attributes={
        **{tag: set(attrs) for tag, attrs in ATTRS_BY_TAG.items()},
        "a": {"href"},
    },
    allowed_classes={"span": {"smallcaps"}, "code": {"tex"}},
    url_schemes={"http", "https"},
    link_rel="nofollow noopener",
    strip_comments=True,
    # Raw <script>/<style> can never come from us (all text is escaped), but if someone calls
    # sanitize() on foreign HTML their content must go too, not just the tags.
    clean_content_tags={"script", "style"},
)


def sanitize(html_fragment: str) -> str:
    """Clean an HTML fragment against the typesetting allowlist.

    Keeps only the MathML Core elements and the text markup this module emits (``p``, ``em``,
    ``strong``, ``code class="tex"``, ``span class="smallcaps"``, ``a href`` with http/https
    URLs only, which get ``rel="nofollow noopener"``).  Scripts, styles, event handlers, SVG,
    images, iframes and ``javascript:`` URLs never survive.  Idempotent:
    ``sanitize(sanitize(x)) == sanitize(x)``.  Note that ``"`` in text content is left as is
    (it is harmless outside attributes); ``<``, ``>`` and ``&`` are always escaped.
    """
    return _CLEANER.clean(html_fragment)

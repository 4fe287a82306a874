"""Comments' text: a small Markdown subset with TeX in ``$…$``, rendered to safe HTML.

What a writer may use: paragraphs (a blank line), ``*emphasis*`` and ``**strong**``,
```code``` and fenced blocks, ``[links](https://…)`` and bare https addresses, ``>`` quotes
(three deep at most: deeper marks are read as the third level's text), ``-`` and ``1.``
lists, and ``$…$`` formulas typeset by the site's one typesetter (papers.typesetting: MathML,
no script; a formula it cannot typeset shows its source). ``\\$`` is a dollar sign.

Written for hostile text: one pass over the lines, nothing nested deeper than three quotes,
at most ``MAX_FORMULAS`` formulas typeset (the rest shown as source), and every result passed
through an allow-list sanitiser, so a script, an event handler or a ``javascript:`` link
never reaches a page whatever the renderer above it does. Links carry ``rel="ugc nofollow"``.
"""

from __future__ import annotations

import html
import re

import nh3

from papers.typesetting import tex_to_html
from papers.typesetting.sanitising import ATTRS_BY_TAG, MATHML_TAGS

MAX_QUOTE_DEPTH = 3
MAX_FORMULAS = 100
MAX_FORMULA_CHARACTERS = 500

# Explicit bidi embeddings and overrides reverse the text after them (a name that reads as
# another); each comment is its own direction-isolated block (dir="auto"), and these go.
_BIDI_OVERRIDES = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e"))

_FENCE = re.compile(r"^\s{0,3}```")
_QUOTE = re.compile(r"^\s{0,3}>")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s{0,3}\d{1,9}[.)]\s+(.*)$")

# Inline: the spans that are taken out before the rest is escaped, in one alternation so one
# scan finds them in order: code, an escaped dollar, a formula, a link, a bare address. Every
# span is bounded in length, as are emphasis and strong, so no text makes a scan quadratic.
_INLINE = re.compile(
    r"(?P<code>`{1,3})(?P<code_text>[^`]{1,1000}?)(?P=code)"
    r"|(?P<dollar>\\\$)"
    r"|\$(?P<math>[^$\n]{1,2000}?)\$"
    r"|\[(?P<label>[^\[\]\n]{1,300})\]\((?P<href>https?://[^\s()<>]{1,2000})\)"
    r"|(?P<bare>https?://[^\s<>()\[\]]{1,2000}[^\s<>()\[\].,;:!?'\"])",
    re.DOTALL,
)
_STRONG = re.compile(r"\*\*(?=\S)((?:[^*]|\*(?!\*)){1,300}?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=\S)([^*_]{1,300}?)(?<=\S)\1(?![\w*])")
_LINK_FINDER = re.compile(r"https?://|www\.", re.IGNORECASE)

_CLEANER = nh3.Cleaner(
    tags=set(MATHML_TAGS)
    | {"p", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a", "span", "br"},
    attributes={**{tag: set(attrs) for tag, attrs in ATTRS_BY_TAG.items()}, "a": {"href"}},
    allowed_classes={"code": {"tex"}},
    url_schemes={"http", "https"},
    link_rel="ugc nofollow",
    strip_comments=True,
    clean_content_tags={"script", "style"},
)


def has_links(text: str) -> bool:
    """Whether ``text`` names an address (what new accounts may not post yet)."""
    return _LINK_FINDER.search(text) is not None


def render(text: str) -> str:
    """``text`` as sanitised HTML (block elements)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_BIDI_OVERRIDES)
    budget = [MAX_FORMULAS]
    out: list[str] = []
    _blocks(text.split("\n"), 1, out, budget)
    return _CLEANER.clean("".join(out))


def _blocks(lines: list[str], depth: int, out: list[str], budget: list[int]) -> None:
    paragraph: list[str] = []
    index = 0

    def close_paragraph() -> None:
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph), budget)}</p>")
            paragraph.clear()

    while index < len(lines):
        line = lines[index]
        if not line.strip():
            close_paragraph()
            index += 1
        elif _FENCE.match(line):
            close_paragraph()
            end = index + 1
            while end < len(lines) and not _FENCE.match(lines[end]):
                end += 1
            code = "\n".join(lines[index + 1 : end])
            out.append(f"<pre><code>{html.escape(code)}</code></pre>")
            index = end + 1
        elif _QUOTE.match(line):
            close_paragraph()
            end = index
            while end < len(lines) and _QUOTE.match(lines[end]):
                end += 1
            inner = [_unquote(each, deeper=depth < MAX_QUOTE_DEPTH) for each in lines[index:end]]
            out.append("<blockquote>")
            if depth < MAX_QUOTE_DEPTH:
                _blocks(inner, depth + 1, out, budget)
            else:
                out.append(f"<p>{_inline(' '.join(x for x in inner if x.strip()), budget)}</p>")
            out.append("</blockquote>")
            index = end
        elif _BULLET.match(line) or _NUMBERED.match(line):
            close_paragraph()
            pattern = _BULLET if _BULLET.match(line) else _NUMBERED
            items: list[list[str]] = []
            while index < len(lines) and lines[index].strip():
                item = pattern.match(lines[index])
                if item:
                    items.append([item.group(1)])
                elif _BULLET.match(lines[index]) or _NUMBERED.match(lines[index]):
                    break  # the other kind of list starts
                else:
                    items[-1].append(lines[index].strip())
                index += 1
            tag = "ul" if pattern is _BULLET else "ol"
            rendered = "".join(f"<li>{_inline(' '.join(item), budget)}</li>" for item in items)
            out.append(f"<{tag}>{rendered}</{tag}>")
        else:
            paragraph.append(line.strip())
            index += 1
    close_paragraph()


def _unquote(line: str, *, deeper: bool) -> str:
    """A quoted line less one ``>``; at the deepest level every further ``>`` goes too, so
    that ten thousand marks cost one pass, not ten thousand levels."""
    rest = line.lstrip()[1:]
    if not deeper:
        rest = rest.lstrip("> \t")
    return rest[1:] if rest.startswith(" ") else rest


def _inline(text: str, budget: list[int]) -> str:
    parts: list[str] = []
    position = 0
    for found in _INLINE.finditer(text):
        parts.append(_plain(text[position : found.start()]))
        position = found.end()
        if found.group("code") is not None:
            parts.append(f"<code>{html.escape(found.group('code_text').strip())}</code>")
        elif found.group("dollar") is not None:
            parts.append("$")
        elif found.group("math") is not None:
            parts.append(_formula(found.group("math"), budget))
        elif found.group("href") is not None:
            parts.append(_link(found.group("href"), html.escape(found.group("label"))))
        else:
            parts.append(_link(found.group("bare"), html.escape(found.group("bare"))))
    parts.append(_plain(text[position:]))
    return "".join(parts)


def _plain(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = _STRONG.sub(r"<strong>\1</strong>", escaped)
    return _EMPHASIS.sub(r"<em>\2</em>", escaped)


def _link(href: str, label: str) -> str:
    return f'<a href="{html.escape(href)}">{label}</a>'


def _formula(tex: str, budget: list[int]) -> str:
    """One ``$…$``: typeset while the budget lasts and it is not too long; else its source."""
    if budget[0] <= 0 or len(tex) > MAX_FORMULA_CHARACTERS or not tex.strip():
        return f'<code class="tex">{html.escape("$" + tex + "$")}</code>'
    budget[0] -= 1
    return tex_to_html(f"${tex}$", paragraphs=False)

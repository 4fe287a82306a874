"""The node tree → sanitised HTML or plain text: the two public entry points."""

from __future__ import annotations

import html
import logging
import re
import unicodedata

from .mathml import convert_math, formula_body
from .mathtext import math_text
from .nodes import PAR, Link, Math, Node, Styled, Text
from .sanitising import sanitize
from .textmode import parse

_log = logging.getLogger("papers.typesetting")

_MARKUP = {"em": ("<em>", "</em>"), "strong": ("<strong>", "</strong>"),
           "code": ("<code>", "</code>"),
           "smallcaps": ('<span class="smallcaps">', "</span>")}  # fmt: skip
_ASCII_WS = re.compile(r"[ \t\n\r\f\v]+")
_SAFE_URL = re.compile(r"https?://[^\s<>\"\\^`{|}\x00-\x1f\x7f]+\Z", re.I)


def _math_html(node: Math) -> str:
    converted = convert_math(formula_body(node.tex), node.display)
    if converted is None:
        return '<code class="tex">' + html.escape(node.source, quote=False) + "</code>"
    return converted


def _is_safe_url(url: str) -> bool:
    return _SAFE_URL.match(url) is not None


def _render_html(nodes: list[Node], parts: list[str], in_link: bool = False) -> None:
    for node in nodes:
        if isinstance(node, Text):
            parts.append(html.escape(node.text, quote=False))
        elif isinstance(node, Math):
            parts.append(_math_html(node))
        elif isinstance(node, Styled):
            if node.kind is None:
                _render_html(node.children, parts, in_link)
            else:
                open_tag, close_tag = _MARKUP[node.kind]
                parts.append(open_tag)
                _render_html(node.children, parts, in_link)
                parts.append(close_tag)
        elif isinstance(node, Link):
            if in_link or not _is_safe_url(node.url):
                # Not linkable (nested link, or a scheme other than http/https): show as text.
                _render_html(node.children, parts, True)
                if node.has_label and not in_link:
                    parts.append(" (" + html.escape(node.url, quote=False) + ")")
            else:
                parts.append(f'<a href="{html.escape(node.url)}" rel="nofollow noopener">')
                _render_html(node.children, parts, True)
                parts.append("</a>")
        # ParBreak only occurs at top level and is handled by the caller.


def _split_paragraphs(nodes: list[Node]) -> list[list[Node]]:
    paragraphs: list[list[Node]] = [[]]
    for node in nodes:
        if node is PAR:
            paragraphs.append([])
        else:
            paragraphs[-1].append(node)
    return paragraphs


def _finish(text: str) -> str:
    # Collapse ASCII whitespace only: U+00A0 from "~" is deliberate and must survive.
    return unicodedata.normalize("NFC", _ASCII_WS.sub(" ", text)).strip(" ")


def tex_to_html(source: str, *, paragraphs: bool = True) -> str:
    """Typeset an arXiv title or abstract as a sanitised HTML fragment.

    * Text-mode TeX (accents, ``\\emph``/``\\textbf``/…, dashes, quotes, ``~``, escaped
      specials, ``\\url``/``\\href``) becomes Unicode text and ``em``/``strong``/``code``/
      ``span.smallcaps``/``a`` markup.  Unknown macros are shown as their source.
    * Maths (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``, a display environment, a formula
      with one of its dollars missing, scripts written without dollars: see :mod:`.formulas`)
      becomes ``<math>`` (MathML Core, ``display="block"`` for display maths) with the TeX kept
      in its ``alttext``; a formula that cannot be converted is shown as
      ``<code class="tex">`` holding its source.
    * Paragraphs: the result is wrapped in ``<p>`` elements **only** when the source has more
      than one non-empty paragraph (a newline followed by indentation, arXiv's "\\n  ", or a
      blank line).  Otherwise it is inline HTML that can go inside ``<h1>``/``<a>``.  Pass
      ``paragraphs=False`` for titles: arXiv wraps long titles with "\\n  " as well, so the
      break must not be read as a paragraph there.
    * Runs of whitespace collapse to one space; the result is stripped and NFC-normalised.

    Never raises; the result always satisfies ``sanitize(result) == result``.
    """
    if not source:
        return ""
    try:
        return _tex_to_html(source, paragraphs)
    except RecursionError:  # braces or \emph nested hundreds deep: show the source
        pass
    except Exception:  # a bug here must not break ingest; log it and show the source
        _log.exception("tex_to_html failed; showing the source as text")
    return sanitize(_finish(html.escape(source, quote=False)))


def _tex_to_html(source: str, paragraphs: bool) -> str:
    rendered: list[str] = []
    for paragraph in _split_paragraphs(parse(source, paragraphs)):
        parts: list[str] = []
        _render_html(paragraph, parts)
        text = _finish("".join(parts))
        if text:
            rendered.append(text)
    if len(rendered) > 1:
        out = "".join(f"<p>{p}</p>" for p in rendered)
    else:
        out = rendered[0] if rendered else ""
    return sanitize(out)


def _render_text(nodes: list[Node], parts: list[str]) -> None:
    for node in nodes:
        if isinstance(node, Text):
            parts.append(node.text)
        elif isinstance(node, Math):
            parts.append(math_text(node.tex))
        elif isinstance(node, Styled):
            _render_text(node.children, parts)
        elif isinstance(node, Link):
            _render_text(node.children, parts)
            if node.has_label and not _is_safe_url(node.url):
                parts.append(f" ({node.url})")
        else:  # paragraph break
            parts.append(" ")


def tex_to_text(source: str) -> str:
    """Plain Unicode text for author names, search, feeds and ``<title>``.

    Same text-mode rules as :func:`tex_to_html` but without markup and without HTML escaping
    (templates escape).  Maths keeps a readable Unicode form where that is easy (Greek
    letters, ×, ±, ∼, ≤, simple super/subscripts such as ``10⁻³``); anything else stays as
    its TeX source minus the ``$`` delimiters.  Link targets of ``\\href`` are dropped for
    http(s) links (the text is what is read) and kept in parentheses otherwise.  All
    whitespace, including paragraph breaks, collapses to single spaces; ``~`` stays a
    non-breaking space.  Never raises and never drops text.
    """
    if not source:
        return ""
    try:
        parts: list[str] = []
        _render_text(parse(source, paragraphs=False), parts)
        return _finish("".join(parts))
    except RecursionError:  # absurdly deep nesting: the source is the best text we have
        pass
    except Exception:
        _log.exception("tex_to_text failed; returning the source")
    return _finish(source)

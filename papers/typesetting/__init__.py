"""TeX → HTML and TeX → Unicode text for arXiv titles, abstracts and author names.

arXiv metadata is written in a loose dialect of LaTeX that is never actually compiled: authors
mix prose with ``$…$`` math, TeX accents, a few font commands and the occasional literal dollar
or percent sign.  This package turns it into

* :func:`tex_to_html` – a sanitised HTML fragment (text markup plus MathML Core for the maths,
  so browsers render formulas natively without JavaScript), and
* :func:`tex_to_text` – plain Unicode text for author names, search, feeds and ``<title>``.

It is pure Python (no Django) and runs when a paper's TeX is stored or edited; the stored
output is tagged with :data:`TYPESETTER_VERSION` so it can be regenerated when the output
changes.

Guiding rules
-------------
* Never raise and never silently drop text: anything not understood (an unknown macro, a formula
  latex2mathml cannot convert) is shown as its TeX source, a formula once and whole, never as
  converted symbols among leftover markup.
* A ``$`` is maths only where it pairs with another as a formula, or where an author left one
  sign of a formula out; a ``$`` in a text with no formula is money and stays as written.
* A bare ``%`` is a percent sign, never a comment (abstracts are not TeX files).
* Whatever the input, the HTML passes through an allowlist sanitiser (:func:`sanitize`).

The modules, in the order the text flows through them:

* :mod:`.formulas` decides where the formulas are: which dollars pair, which are money or
  stray, and maths written without dollars;
* :mod:`.textmode` scans the TeX into a node tree (:mod:`.nodes`), emitting those formulas;
* :mod:`.symbols` asks pylatexenc's latex2text what each macro stands for (accents, letters,
  symbols), in text and in maths alike;
* :mod:`.mathml` turns each formula into MathML (latex2mathml), :mod:`.mathtext` into plain
  Unicode;
* :mod:`.rendering` writes the tree out as HTML or as text;
* :mod:`.sanitising` holds the allowlist every HTML result passes through.
"""

from .rendering import tex_to_html, tex_to_text
from .sanitising import sanitize

__all__ = ["TYPESETTER_VERSION", "sanitize", "tex_to_html", "tex_to_text"]

#: Bump whenever the HTML or text produced for some input changes, so stored renderings
#: can be found and regenerated.
TYPESETTER_VERSION: int = 6

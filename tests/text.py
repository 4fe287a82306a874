"""Small checks on text that tests share."""

from __future__ import annotations

import re

from django.core.mail import EmailMessage, EmailMultiAlternatives


def search(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    """``re.search`` that fails the test, showing the text, when nothing matches."""
    found = re.search(pattern, text, flags)
    assert found is not None, f"{pattern!r} not in {text[:2000]!r}"
    return found


def html_part(message: EmailMessage) -> str:
    """The HTML alternative of a sent mail (digests and notices have one)."""
    assert isinstance(message, EmailMultiAlternatives), message
    content, mimetype = message.alternatives[0]
    assert mimetype == "text/html" and isinstance(content, str)
    return content

from django import template
from django.utils.safestring import SafeString

from ..search import mark_html

register = template.Library()


@register.filter(is_safe=True)
def mark_words(markup: str, words: list[str]) -> SafeString:
    """``{{ html|mark_words:paper.search_words }}``: the input must be sanitised HTML."""
    return mark_html(markup, words or ())

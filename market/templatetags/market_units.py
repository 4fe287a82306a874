from django import template

from ..units import format_credits

register = template.Library()


@register.filter
def credits(micro: int) -> str:
    """µ¢ as people read them: ``1,234.5 credits``."""
    return format_credits(int(micro))


@register.filter
def signed_percent(fraction: float | None) -> str:
    return "" if fraction is None else f"{fraction:+.1%}"

import datetime as dt

from django import template
from django.utils import timezone
from django.utils.dateformat import format as format_date

register = template.Library()


@register.filter
def day_heading(day: dt.date) -> str:
    """`Friday 2 October`, with the year only when it is not the current one."""
    if day.year == timezone.localdate().year:
        return format_date(day, "l j F")
    return format_date(day, "l j F Y")

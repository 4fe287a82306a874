"""Form fields shared by the apps' admins."""

from __future__ import annotations

import sys
from typing import Any

from django import forms
from django.db import models
from django.forms.fields import InvalidJSONInput


class JSONField(forms.JSONField):
    """Django's JSON form field, refusing text that Python cannot decode instead of failing.

    Django turns only ``json.JSONDecodeError`` into a form error. A number longer than Python
    converts (``sys.get_int_max_str_digits()``, 4,300 digits by default) raises a plain
    ValueError, and brackets nested past the recursion limit a RecursionError: both were
    server errors on an admin page, from a few kilobytes anyone with the form can type.
    """

    default_error_messages = {
        "too_many_digits": "Numbers can have at most %(limit)s digits.",
        "too_deep": "This is nested too deeply: use fewer levels of brackets.",
    }

    def to_python(self, value: Any) -> Any:
        try:
            return super().to_python(value)
        except ValueError:  # not a JSONDecodeError: the base class turned those into errors
            raise forms.ValidationError(
                self.error_messages["too_many_digits"],
                code="too_many_digits",
                params={"limit": f"{sys.get_int_max_str_digits():,}"},
            ) from None
        except RecursionError:
            raise forms.ValidationError(self.error_messages["too_deep"], code="too_deep") from None

    def bound_data(self, data: Any, initial: Any) -> Any:
        # The form shown again with its errors decodes the text a second time.
        try:
            return super().bound_data(data, initial)
        except (ValueError, RecursionError):
            return InvalidJSONInput(data)


# For a ModelAdmin's ``formfield_overrides``: every JSON column edited through our JSONField.
JSON_FORMFIELD_OVERRIDES: dict[type[models.Field], dict[str, Any]] = {
    models.JSONField: {"form_class": JSONField},
}

from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.db import IntegrityError, transaction

from .limits import login_limited, too_many_attempts
from .models import Preferences

EMAIL_TAKEN = "An account with this email address already exists."
USERNAME_TAKEN = "A user with that username already exists."
USERNAME_NOT_ASCII = (
    "Use the letters A to Z, digits and @ . + - _ only: a name must not pass for another "
    "by letters from other alphabets that look the same."
)
# The database's names for the two unique rules a sign-up can break: auth's username
# constraint and the case-insensitive e-mail index of migration 0002.
EMAIL_INDEX = "accounts_user_email_ci_unique"
USERNAME_CONSTRAINT = "auth_user_username_key"


def email_in_use(email: str, *, excluding=None) -> bool:
    users = get_user_model().objects.filter(email__iexact=email)
    if excluding is not None and excluding.pk is not None:
        users = users.exclude(pk=excluding.pk)
    return users.exists()


class SignupForm(UserCreationForm):
    email = forms.EmailField(
        help_text="For password resets and, if you ask for it, the daily digest."
    )

    # Django's UserCreationForm has a Meta; django-stubs leaves it out.
    class Meta(UserCreationForm.Meta):  # type: ignore[name-defined]
        model = get_user_model()
        fields = ("username", "email")

    def clean_username(self) -> str:
        # ASCII only: "Cаse" with a Cyrillic "а" would pass for "Case" on the leaderboard and
        # the trader pages. (Names differing only in case are refused by Django's own check.)
        username = super().clean_username()  # None when Django found the name taken
        if username and not username.isascii():
            raise forms.ValidationError(USERNAME_NOT_ASCII)
        return username

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip()
        if email_in_use(email):
            raise forms.ValidationError(EMAIL_TAKEN)
        return email

    def create_user(self):
        """Save the new account, or return None with a form error if the name or address was
        taken since the form was checked.

        Two people submitting the same username or address at once both pass the checks above;
        the database's unique rules let only one in, and the other is told why, like anyone
        who picked a taken name.
        """
        try:
            with transaction.atomic():
                return self.save()
        except IntegrityError as exc:
            constraint = getattr(getattr(exc.__cause__, "diag", None), "constraint_name", "")
            if constraint == EMAIL_INDEX:
                self.add_error("email", EMAIL_TAKEN)
            elif constraint == USERNAME_CONSTRAINT:
                self.add_error("username", USERNAME_TAKEN)
            else:
                raise
            return None


class PreferencesForm(forms.ModelForm):
    class Meta:
        model = Preferences
        fields = ("daily_digest", "public_trader_page")
        labels = {
            "daily_digest": "Send me the daily digest",
            "public_trader_page": "Show my trader page to others",
        }


class RateLimitedAdminAuthenticationForm(AdminAuthenticationForm):
    """The admin's login form, limited like /accounts/login/ and counted together with it.

    Checked before the password is, so once the limit is reached even the right password is
    refused: the guesses it ends are the point.
    """

    def clean(self):
        if self.request is not None and login_limited(self.request):
            raise forms.ValidationError(too_many_attempts(), code="rate_limited")
        return super().clean()

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm


class SignupForm(UserCreationForm):
    email = forms.EmailField(
        help_text="For password resets and, if you ask for it, the daily digest."
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip()
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this email address already exists.")
        return email


class PreferencesForm(forms.ModelForm):
    class Meta:
        from .models import Preferences

        model = Preferences
        fields = ("daily_digest",)
        labels = {"daily_digest": "Send me the daily digest"}

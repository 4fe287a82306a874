"""The claim form: the evidence a reader gives, each kind checked before anything is stored."""

from __future__ import annotations

from django import forms

from .claims import MAX_NOTE, is_webmail
from .orcid import normalise_orcid


class ClaimForm(forms.Form):
    orcid = forms.CharField(
        label="ORCID iD",
        required=False,
        max_length=60,
        help_text="Such as 0000-0002-1825-0097; the curator compares it with your ORCID record.",
    )
    institution_email = forms.EmailField(
        label="Address at your institution",
        required=False,
        help_text="We mail a link there; opening it confirms the address is yours.",
    )
    note = forms.CharField(
        label="Note for the curator",
        required=False,
        max_length=MAX_NOTE,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Anything that helps: your home page, a co-author who knows you.",
    )

    def clean_orcid(self) -> str:
        return normalise_orcid(self.cleaned_data["orcid"])

    def clean_institution_email(self) -> str:
        address = self.cleaned_data["institution_email"].strip()
        if address and is_webmail(address):
            raise forms.ValidationError(
                "This is a personal mailbox anyone can open: give your address at your "
                "university or lab, or leave it empty and use another kind of evidence."
            )
        return address

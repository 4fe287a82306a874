from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import User

from .forms import EMAIL_TAKEN, RateLimitedAdminAuthenticationForm, email_in_use
from .models import DigestDelivery, Preferences, SavedSearch


@admin.register(Preferences)
class PreferencesAdmin(admin.ModelAdmin):
    list_display = ["user", "daily_digest"]
    list_filter = ["daily_digest"]
    search_fields = ["user__username", "user__email"]


@admin.register(DigestDelivery)
class DigestDeliveryAdmin(admin.ModelAdmin):
    list_display = ["date", "user", "paper_count", "sent_at"]
    list_filter = ["date"]
    date_hierarchy = "date"


class UserChangeFormWithUniqueEmail(UserChangeForm):
    def clean_email(self) -> str:
        email = self.cleaned_data.get("email", "").strip()
        # The database refuses a second account with the same address (any case); say so
        # here rather than let the save fail.
        if email and email_in_use(email, excluding=self.instance):
            raise forms.ValidationError(EMAIL_TAKEN)
        return email


# AdminSite's documented hook for its login form: the admin's login counts against the same
# limit as the site's.
admin.site.login_form = RateLimitedAdminAuthenticationForm
admin.site.unregister(User)


@admin.register(User)
class AccountUserAdmin(UserAdmin):
    form = UserChangeFormWithUniqueEmail


@admin.register(SavedSearch)
class SavedSearchAdmin(admin.ModelAdmin):
    list_display = ["query", "sort", "user", "created_at"]
    search_fields = ["query", "user__username"]
    raw_id_fields = ["user"]

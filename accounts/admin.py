from django.contrib import admin

from .models import DigestDelivery, Preferences


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

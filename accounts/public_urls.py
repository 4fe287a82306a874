"""Pages about a person that live outside /accounts/: the public trader pages."""

from django.urls import path

from . import views

urlpatterns = [
    path("traders/<str:username>/", views.trader, name="trader"),
]

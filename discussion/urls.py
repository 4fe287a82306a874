from django.urls import path

from . import feeds, views

app_name = "discussion"

urlpatterns = [
    path("discussion/post/", views.post, name="post"),
    path("discussion/follow/", views.follow, name="follow"),
    path("discussion/comment/<int:pk>/", views.comment, name="comment"),
    path("discussion/comment/<int:pk>/edit/", views.edit, name="edit"),
    path("discussion/comment/<int:pk>/delete/", views.delete, name="delete"),
    path("discussion/comment/<int:pk>/vote/", views.vote, name="vote"),
    path("discussion/comment/<int:pk>/report/", views.report, name="report"),
    path("discussion/<str:target>/feed.atom", feeds.ThreadFeed(), name="feed"),
]

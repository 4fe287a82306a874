from django.urls import path, re_path

from papers.identifiers import ARXIV_ID

from . import views

app_name = "library"

PAPER = rf"^abs/(?P<arxiv_id>{ARXIV_ID})"

urlpatterns = [
    path("library/", views.library_page, name="library"),
    path("library/export.bib", views.export, {"kind": "bib"}, name="export_bibtex"),
    path("library/export.txt", views.export, {"kind": "ids"}, name="export_ids"),
    path("library/tags/", views.create_tag, name="create_tag"),
    path("library/tags/rename/", views.rename_tag, name="rename_tag"),
    path("library/tags/delete/", views.delete_tag, name="delete_tag"),
    re_path(rf"{PAPER}/save/$", views.toggle_save, name="save"),
    re_path(rf"{PAPER}/tags/$", views.set_tags, name="tags"),
    re_path(rf"{PAPER}/read/$", views.mark_read, name="read"),
    re_path(rf"{PAPER}/note/$", views.write_note, name="note"),
    path("recommended/", views.recommended_page, name="recommended"),
    path("hot/", views.hot_page, name="hot"),
]

from django.urls import path, re_path

from . import search_views, views
from .feeds import CategoryFeed
from .identifiers import ARXIV_ID as ARXIV_ID_PATTERN

app_name = "papers"

# arXiv identifiers: 2411.01234 (since 2007) or cs/0101001 (archive/number, before that). The
# pattern lives in papers.identifiers, which the model validator and the ingest read too.
ARXIV_ID = rf"(?P<arxiv_id>{ARXIV_ID_PATTERN})"

urlpatterns = [
    path("", views.home, name="home"),
    path("list/<str:code>/", views.category_listing, name="category"),
    path("list/<str:code>/feed/", CategoryFeed(), name="feed"),
    path("list/<str:code>/watch/", views.toggle_watch, name="watch"),
    path("list/<str:code>/<str:date>/", views.category_listing, name="category_date"),
    re_path(rf"^abs/{ARXIV_ID}/$", views.paper_detail, name="paper"),
    re_path(rf"^abs/{ARXIV_ID}v\d+/$", views.paper_version_redirect),
    re_path(rf"^abs/{ARXIV_ID}/cite\.bib$", views.paper_bibtex, name="paper_bibtex"),
    path("watching/", views.watching, name="watching"),
    # Names may hold a slash ("J. Smith/ACME" happens in feeds): the rest of the path is the name.
    path("author/<path:name>/", views.author, name="author"),
    path("archive/<str:archive_code>/", views.archive, name="archive"),
    path("search/", search_views.search_page, name="search"),
]

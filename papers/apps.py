from django.apps import AppConfig


class PapersConfig(AppConfig):
    name = "papers"
    verbose_name = "Papers"

    def ready(self) -> None:
        from peerrevenue import keep, metrics

        from .metrics import ingest_figures

        metrics.scrape_source(ingest_figures)

        # What kept pages of papers are keyed by (peerrevenue.keep); the stamps are moved by
        # triggers (papers/sql/stamps.sql), so no write has to remember them.
        keep.fact("papers", "SELECT value FROM kept_stamp WHERE name = 'papers'")
        keep.fact("research", "SELECT value FROM kept_stamp WHERE name = 'research'")
        # Categories added, removed or renamed: for pieces that show a category's name
        # without being keyed by its row (migration 0026).
        keep.fact("categories", "SELECT value FROM kept_stamp WHERE name = 'categories'")
        keep.fact("category", "SELECT stamp FROM papers_category WHERE code = %s", arguments=1)
        keep.fact("paper", "SELECT stamp FROM papers_paper WHERE arxiv_id = %s", arguments=1)
        # The watch button's figures are read per request rather than kept: a reader's watch
        # then changes one count, not the page it sits on.
        keep.fact(
            "watchers",
            "SELECT count(*) FROM papers_watch AS w JOIN papers_category AS c"
            " ON c.id = w.category_id WHERE c.code = %s",
            arguments=1,
        )
        keep.fact(
            "watching",
            "SELECT EXISTS (SELECT 1 FROM papers_watch AS w JOIN papers_category AS c"
            " ON c.id = w.category_id WHERE c.code = %s AND w.user_id = %s)",
            arguments=2,
        )

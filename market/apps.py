from django.apps import AppConfig


class MarketConfig(AppConfig):
    name = "market"
    verbose_name = "Market"

    def ready(self) -> None:
        from peerrevenue import keep

        # orders and signals: imported to connect the receivers and the fill hook.
        from . import orders, signals, trade_box  # noqa: F401
        from .tickers import clock_bucket, price_titles

        # Every page may highlight terms (the term set) and fill price holes (the prices: the
        # sum of every term's stamp, which each trade moves): read with every page's facts.
        keep.fact("terms", "SELECT value FROM kept_stamp WHERE name = 'terms'", every_page=True)
        keep.fact(
            "prices", "SELECT coalesce(sum(stamp), 0)::bigint FROM market_term", every_page=True
        )
        keep.fact("mentions", "SELECT value FROM kept_stamp WHERE name = 'mentions'")
        keep.fact("term", "SELECT stamp FROM market_term WHERE slug = %s", arguments=1)
        # The market table's terms and their stamps (market.board), as {id: stamp}.
        keep.fact(
            "market_stamps",
            "SELECT json_object_agg(id, stamp) FROM market_term WHERE status <> 'delisted'",
        )
        # The signed-in reader's trade box on a term page, read with the page's facts.
        keep.fact(trade_box.FACT, trade_box.fact_sql(), arguments=2)
        keep.filler("price", price_titles)
        # Hover prices (a day's change) and term pages' charts are drawn at the clock
        # bucket's time: a whole anonymous page is kept within one bucket, on purpose.
        keep.pages_vary_with(clock_bucket)
        keep.filler("you", own_row)


def own_row(request):
    """Fills ``you`` holes (a kept table's row of trader N) for the reader who is trader N."""
    mine = str(request.user.pk) if request.user.is_authenticated else None
    return mine, lambda user_id: ' class="is-you"' if user_id == mine else ""

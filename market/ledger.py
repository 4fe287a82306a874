"""Proving the books: every invariant of the market, checked with a handful of SQL aggregates.

``check_ledger()`` returns a report whose ``violations`` are sentences a person can act on;
``manage.py check_ledger`` prints it and exits non-zero when any invariant fails, and the
``market.tasks.check_ledger`` beat task logs an error.

Invariants:
1. each ledger transaction sums to zero per asset (cash, and shares of each term);
2. each account's cached cash equals the sum of its cash entries;
3. each holding equals the sum of its share entries (and no entries lack a holding);
4. each term's reserve and supply equal the sums of its pool's entries;
5. nothing is negative: user and fee cash, holdings, supplies, reserves;
6. each term's reserve equals cost(0, supply) on its curve;
7. each term's supply equals the sum of its holdings;
8. user cash + fees + reserves equal everything minted: grants + dividends + adjustments,
   and only those kinds of transaction mint;
9. per term, trade versions run 1, 2, … without gaps up to the term's version, each trade
   starts at the supply the previous one left, and the last leaves the current supply;
10. each trade's ledger entries move exactly the trade's amount, fee and shares;
11. dividends follow the rule (market/rules.md): for each (term, paper) the shares recorded as
    paid equal the shares held through the paper's submission window (each holder's lowest
    balance from the window's opening to the announcement, from the trade history by trade
    time; none when it was announced before the term was listed), and each dividend
    transaction pays each account exactly per-share amount × those shares, paper by paper;
12. limit orders (market/orders.py): each order's filled shares and fill count equal its
    fills' trades, numbered 1, 2, … without gaps, so no order filled more than its shares; each
    fill is a trade of the order's account, term and side, under the key derived from the order
    and the fill's number, and no trade has such a key without being that fill; no fill went
    past the limit (a buy's last share cost at most the limit, a sell's last share paid at
    least it, per share on the curve, the fee on top); and none came before the order was placed,
    at or after its expiry, or after it was closed;
13. no verified author was paid for a mention in their own paper: every account whose reader's
    claim to a paper was approved before its dividend was recorded, and who held shares through
    its window, has those shares recorded as withheld; and each withholding is the account's
    own, under a claim to that very paper approved before the dividend, of exactly the shares
    it held through the window;
14. no share bought inside a paper's window was paid from it: each dividend's window opens no
    later than the paper's first submission when that is known, no later than the start of its
    listing's submission period otherwise, and never after the announcement (invariant 11 then
    holds the payments to that window).

One function per invariant: those about dividends (11, 13, 14) are in market/dividend_books.py,
the report, the collector and the tables' names in market/books.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, transaction

from . import curve
from .books import (
    MAX_LINES_PER_CHECK,
    Collector,
    Invariant,
    LedgerReport,
    accounts_with_names,
    rows,
    tables,
)
from .dividend_books import (
    authors_not_paid_for_their_own_words,
    dividends_follow_the_rule,
    windows_are_the_papers,
)
from .models import Account, LedgerTransaction
from .units import format_credits

__all__ = ["INVARIANTS", "MAX_LINES_PER_CHECK", "LedgerReport", "check_ledger"]


def _account_label(kind: str, account_id: int, username: str | None) -> str:
    if kind == Account.Kind.USER:
        return f"Account {account_id} ({username})"
    return f"The {kind} account ({account_id})"


def check_ledger(*, invariants: Sequence[Invariant] | None = None) -> LedgerReport:
    """Check every invariant (or those given, from ``INVARIANTS``), read-only, against one
    consistent snapshot of the database."""
    if invariants is None:
        invariants = INVARIANTS
    if connection.in_atomic_block:
        return _check(invariants)
    with transaction.atomic():
        # Trades may commit while we run several queries; all of them must see the same
        # moment or a trade between two queries would look like a violation.
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _check(invariants)


def _check(invariants: Sequence[Invariant]) -> LedgerReport:
    names = tables()
    report = LedgerReport(stats=_stats(names))
    out = Collector(report)
    for invariant in invariants:
        invariant(out, names)
    return report


def _stats(t: dict[str, str]) -> dict[str, int]:
    return dict(
        zip(
            ["transactions", "entries", "trades", "accounts", "terms"],
            rows(
                f"""SELECT (SELECT COUNT(*) FROM {t["txn"]}), (SELECT COUNT(*) FROM {t["entry"]}),
                (SELECT COUNT(*) FROM {t["trade"]}), (SELECT COUNT(*) FROM {t["account"]}),
                (SELECT COUNT(*) FROM {t["term"]})"""
            )[0],
            strict=True,
        )
    )


def transactions_balance(out: Collector, t: dict[str, str]) -> None:
    """1. Each ledger transaction sums to zero per asset: cash, and shares of each term."""
    out.add(
        [
            f"Ledger transaction {txn_id} does not balance: its {asset} entries"
            f"{f' for term {term_id}' if term_id else ''} sum to {total:+,}, not 0."
            for txn_id, asset, term_id, total in rows(
                f"""SELECT transaction_id, asset,
                    CASE WHEN asset = 'shares' THEN term_id END AS share_term, SUM(amount)
                FROM {t["entry"]} GROUP BY 1, 2, 3 HAVING SUM(amount) <> 0 ORDER BY 1, 2, 3"""
            )
        ],
        "unbalanced transactions",
    )


def cash_matches_entries(out: Collector, t: dict[str, str]) -> None:
    """2. Each account's cached cash equals the sum of its cash entries."""
    out.add(
        [
            f"{_account_label(kind, account_id, username)} shows cash {cash:,} µ¢ but its "
            f"ledger entries sum to {ledger:,} µ¢ (off by {cash - ledger:+,} µ¢)."
            for account_id, kind, username, cash, ledger in rows(
                f"""SELECT a.id, a.kind, a.username, a.cash, COALESCE(s.total, 0)
                FROM {accounts_with_names(t)} a
                LEFT JOIN (SELECT account_id, SUM(amount) AS total FROM {t["entry"]}
                           WHERE asset = 'cash' AND account_id IS NOT NULL GROUP BY account_id) s
                       ON s.account_id = a.id
                WHERE a.cash <> COALESCE(s.total, 0)
                ORDER BY a.id"""
            )
        ],
        "account problems",
    )


def holdings_match_entries(out: Collector, t: dict[str, str]) -> None:
    """3. Each holding equals the sum of its share entries, and no share entries lack a
    holding."""
    out.add(
        [
            f"Account {account_id} has ledger entries for {ledger:,} shares of term "
            f"{term_id} but no holding row."
            if shares is None
            else f"Account {account_id} shows {shares:,} shares of term {term_id} but its "
            f"ledger entries sum to {ledger:,} (off by {shares - ledger:+,})."
            for account_id, term_id, shares, ledger in rows(
                f"""SELECT COALESCE(h.account_id, s.account_id), COALESCE(h.term_id, s.term_id),
                       h.shares, COALESCE(s.total, 0)
                FROM {t["holding"]} h
                FULL OUTER JOIN (SELECT account_id, term_id, SUM(amount) AS total
                                 FROM {t["entry"]}
                                 WHERE asset = 'shares' AND account_id IS NOT NULL
                                 GROUP BY 1, 2) s
                             ON s.account_id = h.account_id AND s.term_id = h.term_id
                WHERE COALESCE(h.shares, 0) <> COALESCE(s.total, 0)
                ORDER BY 1, 2"""
            )
        ],
        "holding problems",
    )


def _term_label(term_id: int, phrase: str) -> str:
    return f"Term {term_id} (“{phrase}”)"


# The terms whose supply and reserve are not negative (invariant 5 reports the others, and the
# checks of what those figures should be would only repeat it).
_SOUND_TERMS = "SELECT * FROM {term} WHERE supply >= 0 AND reserve >= 0"


def pools_match_entries(out: Collector, t: dict[str, str]) -> None:
    """4. Each term's reserve and supply equal the sums of its pool's entries: the cash the
    pool took in, and the shares it issued."""
    lines = []
    for term_id, phrase, supply, reserve, pool_cash, pool_shares in rows(
        f"""SELECT t.id, t.phrase, t.supply, t.reserve, COALESCE(p.cash, 0), COALESCE(p.shares, 0)
        FROM ({_SOUND_TERMS.format(term=t["term"])}) t
        LEFT JOIN (SELECT term_id,
                          SUM(amount) FILTER (WHERE asset = 'cash') AS cash,
                          SUM(amount) FILTER (WHERE asset = 'shares') AS shares
                   FROM {t["entry"]} WHERE account_id IS NULL GROUP BY term_id) p
               ON p.term_id = t.id
        WHERE t.reserve <> COALESCE(p.cash, 0) OR t.supply <> -COALESCE(p.shares, 0)
        ORDER BY t.id"""
    ):
        label = _term_label(term_id, phrase)
        if reserve != pool_cash:
            lines.append(
                f"{label} shows a reserve of {reserve:,} µ¢ but its ledger entries sum to "
                f"{pool_cash:,} µ¢ (off by {reserve - pool_cash:+,} µ¢)."
            )
        if supply != -pool_shares:
            lines.append(
                f"{label} shows a supply of {supply:,} shares but the ledger issued "
                f"{-pool_shares:,}."
            )
    out.add(lines, "pool problems")


def nothing_negative(out: Collector, t: dict[str, str]) -> None:
    """5. Nothing is negative: the cash of users and fee accounts (only the issuance account
    goes below zero, by what it minted), holdings, supplies and reserves."""
    out.add(
        [
            f"{_account_label(kind, account_id, username)} has negative cash: "
            f"{format_credits(cash)}."
            for account_id, kind, username, cash in rows(
                f"""SELECT id, kind, username, cash FROM {accounts_with_names(t)} a
                WHERE kind <> 'issuance' AND cash < 0 ORDER BY id"""
            )
        ]
        + [
            f"Account {account_id} holds a negative {shares:,} shares of term {term_id}."
            for account_id, term_id, shares in rows(
                f"""SELECT account_id, term_id, shares FROM {t["holding"]}
                WHERE shares < 0 ORDER BY 1, 2"""
            )
        ]
        + [
            f"{_term_label(term_id, phrase)} has a negative supply ({supply:,}) or reserve "
            f"({reserve:,})."
            for term_id, phrase, supply, reserve in rows(
                f"""SELECT id, phrase, supply, reserve FROM {t["term"]}
                WHERE supply < 0 OR reserve < 0 ORDER BY id"""
            )
        ],
        "negative figures",
    )


def reserves_on_the_curve(out: Collector, t: dict[str, str]) -> None:
    """6. Each term's reserve equals cost(0, supply) on its curve: what buying every share
    in existence from nothing would have cost."""
    lines = []
    for term_id, phrase, supply, reserve, p0, k in rows(
        f"""SELECT id, phrase, supply, reserve, p0, k FROM ({_SOUND_TERMS.format(term=t["term"])}) t
        ORDER BY id"""
    ):
        expected = curve.reserve(supply, p0=p0, k=k) if p0 >= 1 and k >= 0 else None
        if reserve != expected:
            lines.append(
                f"{_term_label(term_id, phrase)} holds a reserve of {reserve:,} µ¢ but its curve "
                f"needs cost(0, {supply:,}) = {expected if expected is None else f'{expected:,}'} "
                "µ¢."
            )
    out.add(lines, "reserves off their curve")


def supply_is_held(out: Collector, t: dict[str, str]) -> None:
    """7. Each term's supply equals the sum of its holdings."""
    out.add(
        [
            f"{_term_label(term_id, phrase)} shows a supply of {supply:,} but holders hold "
            f"{held:,}."
            for term_id, phrase, supply, held in rows(
                f"""SELECT t.id, t.phrase, t.supply, COALESCE(h.shares, 0)
                FROM ({_SOUND_TERMS.format(term=t["term"])}) t
                LEFT JOIN (SELECT term_id, SUM(shares) AS shares FROM {t["holding"]}
                           GROUP BY term_id) h ON h.term_id = t.id
                WHERE t.supply <> COALESCE(h.shares, 0)
                ORDER BY t.id"""
            )
        ],
        "supplies their holders do not hold",
    )


def money_adds_up(out: Collector, t: dict[str, str]) -> None:
    """8. User cash + fees + reserves equal everything minted (grants + dividends +
    adjustments), and only those kinds of transaction mint."""
    lines = []
    held_cash, fees, reserves = rows(
        f"""SELECT (SELECT COALESCE(SUM(cash), 0) FROM {t["account"]} WHERE kind = 'user'),
                   (SELECT COALESCE(SUM(cash), 0) FROM {t["account"]} WHERE kind = 'fees'),
                   (SELECT COALESCE(SUM(reserve), 0) FROM {t["term"]})"""
    )[0]
    minted_by_kind = dict(
        rows(
            f"""SELECT x.kind, -SUM(e.amount) FROM {t["entry"]} e
            JOIN {t["txn"]} x ON x.id = e.transaction_id
            JOIN {t["account"]} a ON a.id = e.account_id
            WHERE a.kind = 'issuance' AND e.asset = 'cash' GROUP BY x.kind"""
        )
    )
    minted = sum(minted_by_kind.get(kind, 0) for kind in LedgerTransaction.MINTING_KINDS)
    if held_cash + fees + reserves != minted:
        breakdown = ", ".join(
            f"{kind} {minted_by_kind.get(kind, 0):,}" for kind in LedgerTransaction.MINTING_KINDS
        )
        lines.append(
            f"Money does not add up: user cash {held_cash:,} + fees {fees:,} + reserves "
            f"{reserves:,} = {held_cash + fees + reserves:,} µ¢, but {minted:,} µ¢ were minted "
            f"({breakdown}); difference {held_cash + fees + reserves - minted:+,} µ¢."
        )
    for kind, amount in sorted(minted_by_kind.items()):
        if kind not in LedgerTransaction.MINTING_KINDS and amount:
            lines.append(
                f"{kind} transactions moved {amount:+,} µ¢ out of the issuance account; only "
                "grants, dividends and adjustments may."
            )
    out.add(lines, "money problems")


def trades_in_sequence(out: Collector, t: dict[str, str]) -> None:
    """9. Per term, trade versions run 1, 2, … without gaps up to the term's version, each
    trade starts at the supply the previous one left, and the last leaves the current supply."""
    out.add(
        [
            f"Trade {trade_id} on term {term_id} has version {version:,} where {expected:,} was "
            f"expected, or starts at supply {before:,} where the previous trade left "
            f"{previous:,}."
            for trade_id, term_id, version, expected, before, previous in rows(
                f"""SELECT id, term_id, term_version, expected, supply_before, previous FROM (
                    SELECT id, term_id, term_version, supply_before,
                           ROW_NUMBER() OVER w AS expected,
                           COALESCE(LAG(supply_after) OVER w, 0) AS previous
                    FROM {t["trade"]} WINDOW w AS (PARTITION BY term_id ORDER BY term_version)
                ) s WHERE term_version <> expected OR supply_before <> previous
                ORDER BY term_id, term_version"""
            )
        ],
        "trade sequence problems",
    )
    out.add(
        [
            f"Term {term_id} (“{phrase}”) is at version {version:,} with supply {supply:,}, but "
            f"its trades number {count:,} and the last left supply {last_supply:,}."
            for term_id, phrase, version, supply, count, last_supply in rows(
                f"""SELECT t.id, t.phrase, t.version, t.supply, COALESCE(c.n, 0),
                           COALESCE(l.supply_after, 0)
                FROM {t["term"]} t
                LEFT JOIN (SELECT term_id, COUNT(*) AS n FROM {t["trade"]} GROUP BY term_id) c
                       ON c.term_id = t.id
                LEFT JOIN {t["trade"]} l ON l.term_id = t.id AND l.term_version = (
                    SELECT MAX(term_version) FROM {t["trade"]} WHERE term_id = t.id)
                WHERE t.version <> COALESCE(c.n, 0) OR t.supply <> COALESCE(l.supply_after, 0)
                ORDER BY t.id"""
            )
        ],
        "term version problems",
    )


def trades_match_entries(out: Collector, t: dict[str, str]) -> None:
    """10. Each trade's ledger entries move exactly the trade's amount, fee and shares."""
    out.add(
        [
            f"Trade {trade_id} ({side} {shares:,} shares, amount {amount:,} µ¢, fee {fee:,} µ¢) "
            f"does not match its ledger transaction: trader cash {trader_cash:+,}, reserve "
            f"{pool_cash:+,}, fees {fee_cash:+,} µ¢, trader shares {trader_shares:+,}."
            for (
                trade_id,
                side,
                shares,
                amount,
                fee,
                trader_cash,
                pool_cash,
                fee_cash,
                trader_shares,
            ) in rows(
                f"""SELECT tr.id, tr.side, tr.shares, tr.amount, tr.fee, s.trader_cash,
                           s.pool_cash, s.fee_cash, s.trader_shares
                FROM {t["trade"]} tr
                JOIN (SELECT tr2.id AS trade_id,
                        COALESCE(SUM(e.amount) FILTER (WHERE e.asset = 'cash'
                            AND e.account_id = tr2.account_id), 0) AS trader_cash,
                        COALESCE(SUM(e.amount) FILTER (WHERE e.asset = 'cash'
                            AND e.account_id IS NULL AND e.term_id = tr2.term_id), 0) AS pool_cash,
                        COALESCE(SUM(e.amount) FILTER (WHERE e.asset = 'cash'
                            AND e.account_id <> tr2.account_id), 0) AS fee_cash,
                        COALESCE(SUM(e.amount) FILTER (WHERE e.asset = 'shares'
                            AND e.account_id = tr2.account_id AND e.term_id = tr2.term_id), 0)
                            AS trader_shares
                      FROM {t["trade"]} tr2 JOIN {t["entry"]} e
                        ON e.transaction_id = tr2.transaction_id
                      GROUP BY tr2.id) s ON s.trade_id = tr.id
                WHERE s.pool_cash <> CASE tr.side WHEN 'buy' THEN tr.amount ELSE -tr.amount END
                   OR s.fee_cash <> tr.fee
                   OR s.trader_cash <> CASE tr.side WHEN 'buy' THEN -(tr.amount + tr.fee)
                                                    ELSE tr.amount - tr.fee END
                   OR s.trader_shares <> CASE tr.side WHEN 'buy' THEN tr.shares
                                                      ELSE -tr.shares END
                ORDER BY tr.id"""
            )
        ],
        "trades that differ from their entries",
    )


def orders_match_fills(out: Collector, t: dict[str, str]) -> None:
    """12. Each limit order's fills are its trades, numbered without gaps, within its shares,
    its limit and its life, and every trade under a fill's key is that fill."""
    out.add(
        [
            f"Order {order_id} ({side} {shares:,} shares) shows {filled:,} filled in {fills:,} "
            f"fill(s), but its fills' trades hold {traded:,} shares in {count:,} fill(s) "
            f"numbered up to {top:,}."
            for order_id, side, shares, filled, fills, traded, count, top in rows(
                f"""SELECT o.id, o.side, o.shares, o.filled, o.fills, COALESCE(f.traded, 0),
                           COALESCE(f.n, 0), COALESCE(f.top, 0)
                FROM {t["order"]} o
                LEFT JOIN (SELECT f.order_id, SUM(tr.shares) AS traded, COUNT(*) AS n,
                                  MAX(f.number) AS top
                           FROM {t["fill"]} f JOIN {t["trade"]} tr ON tr.id = f.trade_id
                           GROUP BY f.order_id) f ON f.order_id = o.id
                WHERE o.filled <> COALESCE(f.traded, 0) OR o.fills <> COALESCE(f.n, 0)
                   OR COALESCE(f.top, 0) <> COALESCE(f.n, 0) OR o.filled > o.shares
                ORDER BY o.id"""
            )
        ],
        "orders whose fills do not add up",
    )
    out.add(
        [
            f"Fill {number} of order {order_id} is trade {trade_id}, which "
            + (
                "is not the order's account, term and side"
                if wrong
                else f"has the key {trade_key!r}"
                if bad_key
                else f"went past the limit of {limit:,} µ¢ a share (its "
                f"{'dearest' if side == 'buy' else 'cheapest'} share: {edge:,} µ¢)"
                if past_limit
                else f"was made at {at:%Y-%m-%d %H:%M:%S.%f} UTC, outside the order's life"
            )
            + "."
            for (
                order_id,
                number,
                trade_id,
                side,
                limit,
                trade_key,
                edge,
                at,
                wrong,
                bad_key,
                past_limit,
            ) in rows(
                f"""SELECT order_id, number, trade_id, side, limit_price, key, edge, trade_at,
                        wrong, bad_key, past_limit FROM (
                    SELECT o.id AS order_id, f.number, tr.id AS trade_id, o.side, o.limit_price,
                        tr.key, y.edge, tr.created_at AS trade_at, o.created_at AS order_at,
                        o.expires_at, o.closed_at,
                        (tr.account_id, tr.term_id, tr.side) IS DISTINCT FROM
                            (o.account_id, o.term_id, o.side) AS wrong,
                        tr.key <> 'order:' || o.id || ':fill:' || f.number AS bad_key,
                        CASE o.side WHEN 'buy' THEN y.edge > o.limit_price
                            ELSE y.edge < o.limit_price END AS past_limit
                    FROM {t["fill"]} f
                    JOIN {t["order"]} o ON o.id = f.order_id
                    JOIN {t["trade"]} tr ON tr.id = f.trade_id
                    -- The share nearest the limit: a buy's last (dearest) one, the price after
                    -- less one step of k; a sell's last (cheapest) one, the price after.
                    CROSS JOIN LATERAL (SELECT CASE o.side
                        WHEN 'buy' THEN tr.price_after - (tr.price_after - tr.price_before)
                            / tr.shares
                        ELSE tr.price_after END AS edge) y
                ) x
                WHERE wrong OR bad_key OR past_limit OR trade_at < order_at
                   OR trade_at >= expires_at OR trade_at > closed_at
                ORDER BY 1, 2"""
            )
        ],
        "fills outside their orders",
    )
    out.add(
        [
            f"Trade {trade_id} has the fill key {trade_key!r} but is no order's fill."
            for trade_id, trade_key in rows(
                f"""SELECT tr.id, tr.key FROM {t["trade"]} tr
                LEFT JOIN {t["fill"]} f ON f.trade_id = tr.id
                WHERE tr.key LIKE 'order:%%:fill:%%' AND f.id IS NULL ORDER BY tr.id"""
            )
        ],
        "fill trades without their order",
    )


# In the order of the module's docstring; ``check_ledger`` runs them all.
INVARIANTS: tuple[Invariant, ...] = (
    transactions_balance,
    cash_matches_entries,
    holdings_match_entries,
    pools_match_entries,
    nothing_negative,
    reserves_on_the_curve,
    supply_is_held,
    money_adds_up,
    trades_in_sequence,
    trades_match_entries,
    dividends_follow_the_rule,
    orders_match_fills,
    authors_not_paid_for_their_own_words,
    windows_are_the_papers,
)

"""The ledger check's invariants about dividends (market/ledger.py lists them all): each pays
the shares held through its paper's submission window (11), no verified author is paid for
their own words (13), and no window opens later than its paper's (14)."""

from __future__ import annotations

from papers.calendar import submission_period_start

from .books import Collector, accounts_with_names, rows


def held_through_windows(t: dict[str, str]) -> str:
    """SQL: (event_id, transaction_id, account_id, shares) of each holder paid by each dividend,
    the lowest balance it held at any moment of the paper's window (the balance at the opening,
    or after a move inside the window), for events announced after their term was listed."""
    signed = "CASE tr.side WHEN 'buy' THEN tr.shares ELSE -tr.shares END"
    return f"""
        SELECT event_id, transaction_id, account_id, shares FROM (
            SELECT ev.id AS event_id, ev.transaction_id, m.account_id,
                   LEAST(COALESCE(SUM(m.delta) FILTER (WHERE m.at <= ev.window_opens_at), 0),
                         MIN(m.balance) FILTER (WHERE m.at > ev.window_opens_at)) AS shares
            FROM {t["event"]} ev
            JOIN {t["term"]} te ON te.id = ev.term_id AND ev.announced_at >= te.listed_at
            JOIN (SELECT term_id, account_id, at, delta,
                         SUM(delta) OVER (PARTITION BY term_id, account_id ORDER BY at) AS balance
                  FROM (SELECT tr.term_id, tr.account_id, tr.created_at AS at,
                               SUM({signed}) AS delta
                        FROM {t["trade"]} tr GROUP BY 1, 2, 3) moves
                 ) m ON m.term_id = ev.term_id AND m.at <= ev.announced_at
            GROUP BY ev.id, ev.transaction_id, m.account_id
        ) held WHERE shares > 0"""


def paid_through_windows(t: dict[str, str]) -> str:
    """``held_through_windows`` without the shares withheld from verified authors: what each
    dividend owed each holder."""
    return f"""
        SELECT h.* FROM ({held_through_windows(t)}) h
        WHERE NOT EXISTS (SELECT 1 FROM {t["withheld"]} w
                          WHERE w.event_id = h.event_id AND w.account_id = h.account_id)"""


def dividends_follow_the_rule(out: Collector, t: dict[str, str]) -> None:
    """11. Each dividend recorded and paid what the shares held through its paper's submission
    window earned (none for a paper announced before the term was listed)."""
    held_through = paid_through_windows(t)
    out.add(
        [
            f"The dividend on term {term_id} (“{phrase}”) for paper {paper_id} recorded "
            f"{recorded:,} shares, but {held:,} were held through its window (to the "
            f"announcement at {at:%Y-%m-%d %H:%M} UTC)"
            + (f" and it was paid by ledger transaction {txn_id}." if txn_id else ".")
            for term_id, phrase, paper_id, recorded, held, at, txn_id in rows(
                f"""SELECT ev.term_id, te.phrase, ev.paper_id, ev.shares, COALESCE(h.shares, 0),
                           ev.announced_at, ev.transaction_id
                FROM {t["event"]} ev
                JOIN {t["term"]} te ON te.id = ev.term_id
                LEFT JOIN (SELECT event_id, SUM(shares) AS shares FROM ({held_through}) x
                           GROUP BY event_id) h ON h.event_id = ev.id
                WHERE ev.shares <> COALESCE(h.shares, 0)
                   OR (ev.shares * ev.per_share <> 0) <> (ev.transaction_id IS NOT NULL)
                ORDER BY ev.term_id, ev.paper_id"""
            )
        ],
        "dividends that differ from the holdings through their window",
    )
    out.add(
        [
            f"Dividend transaction {txn_id} paid account {account_id} {paid:,} µ¢, but the "
            f"shares it held through the papers' windows earned {owed:,} µ¢ "
            f"(off by {paid - owed:+,} µ¢)."
            for txn_id, account_id, paid, owed in rows(
                f"""WITH owed AS (
                    SELECT h.transaction_id, h.account_id, SUM(h.shares * ev.per_share) AS amount
                    FROM ({held_through}) h JOIN {t["event"]} ev ON ev.id = h.event_id
                    WHERE h.transaction_id IS NOT NULL GROUP BY 1, 2
                ), paid AS (
                    SELECT e.transaction_id, e.account_id, SUM(e.amount) AS amount
                    FROM {t["entry"]} e
                    JOIN {t["txn"]} x ON x.id = e.transaction_id AND x.kind = 'dividend'
                    JOIN {t["account"]} a ON a.id = e.account_id AND a.kind <> 'issuance'
                    WHERE e.asset = 'cash' GROUP BY 1, 2
                )
                SELECT COALESCE(p.transaction_id, o.transaction_id),
                       COALESCE(p.account_id, o.account_id),
                       COALESCE(p.amount, 0), COALESCE(o.amount, 0)
                FROM paid p FULL OUTER JOIN owed o
                  ON o.transaction_id = p.transaction_id AND o.account_id = p.account_id
                WHERE COALESCE(p.amount, 0) <> COALESCE(o.amount, 0)
                ORDER BY 1, 2"""
            )
        ],
        "dividend payments that differ from the holdings through the windows",
    )


def authors_not_paid_for_their_own_words(out: Collector, t: dict[str, str]) -> None:
    """13. No verified author was paid for a mention in their own paper, and every withholding
    is one the rule asked for."""
    # Claims with their reader's account. An approval is dated when it is through any payout
    # of its paper (market/sql/claim_decisions.sql), so "approved before the dividend was
    # recorded" is "seen by that payout".
    standing = f"""
        SELECT c.id AS claim_id, c.paper_id, c.status, c.decided_at, a.id AS account_id
        FROM {t["claim"]} c JOIN {t["account"]} a ON a.user_id = c.user_id"""
    out.add(
        [
            f"Account {account_id} ({username}) held {shares:,} shares of term {term_id} "
            f"(“{phrase}”) through the window of paper {paper_id}, which its claim {claim_id} "
            f"had made its own (approved {decided:%Y-%m-%d %H:%M:%S} UTC), and none were "
            "withheld: a verified author was paid for their own words."
            for account_id, username, shares, term_id, phrase, paper_id, claim_id, decided in rows(
                f"""SELECT h.account_id, a.username, h.shares, ev.term_id, te.phrase, ev.paper_id,
                           c.claim_id, c.decided_at
                FROM ({held_through_windows(t)}) h
                JOIN {t["event"]} ev ON ev.id = h.event_id
                JOIN {t["term"]} te ON te.id = ev.term_id
                JOIN ({standing}) c ON c.paper_id = ev.paper_id AND c.account_id = h.account_id
                JOIN {accounts_with_names(t)} a ON a.id = h.account_id
                WHERE c.status = 'approved' AND c.decided_at <= ev.created_at
                  AND NOT EXISTS (SELECT 1 FROM {t["withheld"]} w
                                  WHERE w.event_id = ev.id AND w.account_id = h.account_id)
                ORDER BY h.account_id, ev.id"""
            )
        ],
        "verified authors paid for their own papers",
    )
    out.add(
        [
            f"Withholding {withheld_id} kept {shares:,} shares of account {account_id} from the "
            f"dividend on term {term_id} for paper {paper_id}, but "
            + (
                f"the account held {held:,} through the paper's window."
                if justified
                else f"its claim {claim_id} is not that account's claim to that paper, approved "
                "before the dividend."
            )
            for withheld_id, shares, account_id, term_id, paper_id, claim_id, justified, held in (
                rows(
                    f"""SELECT w.id, w.shares, w.account_id, ev.term_id, ev.paper_id, w.claim_id,
                           (c.account_id IS NOT NULL), COALESCE(h.shares, 0)
                    FROM {t["withheld"]} w
                    JOIN {t["event"]} ev ON ev.id = w.event_id
                    LEFT JOIN ({standing}) c ON c.claim_id = w.claim_id
                         AND c.account_id = w.account_id AND c.paper_id = ev.paper_id
                         AND c.decided_at <= ev.created_at
                    LEFT JOIN ({held_through_windows(t)}) h
                         ON h.event_id = w.event_id AND h.account_id = w.account_id
                    WHERE c.account_id IS NULL OR w.shares <> COALESCE(h.shares, 0)
                    ORDER BY w.id"""
                )
            )
        ],
        "withholdings the rule did not ask for",
    )


def windows_are_the_papers(out: Collector, t: dict[str, str]) -> None:
    """14. Each dividend's window opens no later than its paper's submission (or the start of
    its listing's submission period, when the submission time is unknown), and never after the
    announcement: no share bought inside a paper's window was paid from it."""
    dates = [
        row[0]
        for row in rows(
            f"""SELECT DISTINCT ev.date FROM {t["event"]} ev
            JOIN {t["paper"]} p ON p.id = ev.paper_id
            WHERE ev.window_source <> 'announcement' AND p.submitted_at IS NULL"""
        )
    ]
    periods = [submission_period_start(day) for day in dates]
    out.add(
        [
            f"The dividend on term {term_id} (“{phrase}”) for paper {paper_id} counted shares "
            f"from {opens:%Y-%m-%d %H:%M} UTC, but the paper's window opened at "
            f"{expected:%Y-%m-%d %H:%M} UTC ({why}): shares bought in between were paid."
            for term_id, phrase, paper_id, opens, expected, why in rows(
                f"""SELECT ev.term_id, te.phrase, ev.paper_id, ev.window_opens_at,
                           LEAST(COALESCE(p.submitted_at, s.opens), ev.announced_at),
                           CASE WHEN p.submitted_at IS NOT NULL THEN 'its submission'
                                ELSE 'the start of its submission period' END
                FROM {t["event"]} ev
                JOIN {t["term"]} te ON te.id = ev.term_id
                JOIN {t["paper"]} p ON p.id = ev.paper_id
                LEFT JOIN unnest(%s::date[], %s::timestamptz[]) AS s(day, opens)
                       ON s.day = ev.date
                WHERE ev.window_source <> 'announcement'
                  AND ev.window_opens_at > LEAST(COALESCE(p.submitted_at, s.opens),
                                                 ev.announced_at)
                ORDER BY ev.term_id, ev.paper_id""",
                (dates, periods),
            )
        ],
        "dividends whose window opened late",
    )

"""The ledger check's plumbing (market/ledger.py): the report, the collector that caps each
invariant's sentences, the tables' names and a query's rows. Shared by the modules that hold
the invariants, so that each of them reads the books the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import connection

from authorship.models import Claim
from papers.models import Paper

from .models import (
    Account,
    DividendEvent,
    Entry,
    Holding,
    LedgerTransaction,
    Order,
    OrderFill,
    Term,
    Trade,
    WithheldDividend,
)

MAX_LINES_PER_CHECK = 20


@dataclass
class LedgerReport:
    violations: list[str] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def text(self) -> str:
        head = ", ".join(f"{value:,} {name}" for name, value in self.stats.items())
        if self.ok:
            return f"Ledger OK: {head}."
        lines = [f"Ledger check FAILED: {len(self.violations)} violation(s) ({head})."]
        lines += [f"- {violation}" for violation in self.violations]
        return "\n".join(lines)


def rows(sql: str, params: tuple = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def tables() -> dict[str, str]:
    return {
        "entry": Entry._meta.db_table,
        "txn": LedgerTransaction._meta.db_table,
        "account": Account._meta.db_table,
        "holding": Holding._meta.db_table,
        "term": Term._meta.db_table,
        "trade": Trade._meta.db_table,
        "event": DividendEvent._meta.db_table,
        "order": Order._meta.db_table,
        "fill": OrderFill._meta.db_table,
        "withheld": WithheldDividend._meta.db_table,
        "claim": Claim._meta.db_table,
        "paper": Paper._meta.db_table,
    }


class Collector:
    def __init__(self, report: LedgerReport):
        self.report = report

    def add(self, lines: list[str], what: str) -> None:
        self.report.violations.extend(lines[:MAX_LINES_PER_CHECK])
        if len(lines) > MAX_LINES_PER_CHECK:
            self.report.violations.append(
                f"… and {len(lines) - MAX_LINES_PER_CHECK:,} more {what}."
            )


# One invariant's check: it adds a sentence per violation to the report, given the tables' names.
Invariant = Callable[[Collector, dict[str, str]], None]


def accounts_with_names(t: dict[str, str]) -> str:
    """Accounts with the name of their user (NULL for the system accounts), as SQL to join."""
    user_model = get_user_model()  # what Account.user points to
    return f"""(SELECT a.*, u.{user_model.USERNAME_FIELD} AS username FROM {t["account"]} a
               LEFT JOIN {user_model._meta.db_table} u ON u.id = a.user_id)"""

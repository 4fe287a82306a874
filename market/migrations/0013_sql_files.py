"""The market app's triggers and functions, from now on defined in market/sql/ and loaded
from there (peerrevenue.sql).

Each file holds the definitions migrations 0005 to 0012 left, the same as pg_get_functiondef
and pg_get_triggerdef show them, so on a database those migrations made this changes nothing.
A later change to one of them is an edit of its file and a migration that loads it again.
"""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [
        ("market", "0012_fill_orders_procedure"),
        # kept_restamp, kept_bump, kept_bump_statement: papers/sql/stamps.sql.
        ("papers", "0027_sql_files"),
    ]

    # In the order they depend on each other: the fill procedure trades through the trade
    # function, and both use the stamps' trigger on market_term.
    operations = [
        RunSQLFile("market", "stamps.sql"),
        RunSQLFile("market", "place_trade.sql"),
        RunSQLFile("market", "fill_orders.sql"),
        RunSQLFile("market", "closed_terms.sql"),
    ]

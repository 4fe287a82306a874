"""A trade as one server-side function call, so that it costs one round trip on Postgres.

``market.trading`` calls ``market_place_trade`` in autocommit mode: the call is its own
transaction, so BEGIN, the row locks, every write and COMMIT take a single round trip. The
function takes the same locks in the same order as every other market write (the term row, then
the trader's account row, and the fee shard only in its last statement).

It only decides: when a trade is refused it writes nothing and returns ``refused`` with the facts
it decided on (the term, the trader's cash and shares), and ``market.trading`` turns those into
the message the trader reads, with the same checks in Python. The curve and fee functions repeat
``market.curve`` in SQL; tests/market/test_place_trade.py holds the two to the same results.

The function names the tables and columns as they are at this migration: a later migration that
changes them must replace the function too.
"""

from django.db import migrations

# History: the current definitions of these triggers and functions are in
# market/sql/place_trade.sql (loaded by market 0013). A fresh database still runs this SQL as
# written, step by step: change the file and load it again in a new migration, never this.
SQL = r"""
CREATE OR REPLACE FUNCTION market_curve_cost(n bigint, d bigint, p0 bigint, k bigint)
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN p0::numeric * d + div(k::numeric * d * (2 * n::numeric + d - 1), 2);

CREATE OR REPLACE FUNCTION market_fee(amount numeric, basis_points integer)
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN div(amount * basis_points + 9999, 10000);

CREATE OR REPLACE FUNCTION market_place_trade(
    p_user bigint, p_term bigint, p_side text, p_shares bigint, p_limit bigint, p_key text,
    p_fee_basis_points integer, p_fee_shard integer,
    OUT result text, OUT new_trade bigint, OUT new_transaction bigint, OUT traded_at timestamptz,
    OUT trader bigint, OUT trader_cash bigint, OUT trader_shares bigint,
    OUT term_phrase text, OUT term_status text, OUT term_status_reason text, OUT term_p0 bigint,
    OUT term_k bigint, OUT term_supply bigint, OUT term_reserve bigint, OUT term_version bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
    v_sign integer := CASE p_side WHEN 'buy' THEN 1 ELSE -1 END;
    v_amount bigint;
    v_fee bigint;
    v_cash_change bigint;
    v_fee_account bigint;
BEGIN
    SELECT phrase, status, status_reason, p0, k, supply, reserve, version
    INTO term_phrase, term_status, term_status_reason, term_p0, term_k, term_supply,
        term_reserve, term_version
    FROM market_term WHERE id = p_term FOR UPDATE;
    IF NOT FOUND THEN result := 'no_term'; RETURN; END IF;

    SELECT id, cash INTO trader, trader_cash FROM market_account WHERE user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN result := 'no_account'; RETURN; END IF;

    SELECT id INTO new_trade FROM market_trade WHERE account_id = trader AND key = p_key;
    IF FOUND THEN result := 'repeat'; RETURN; END IF;

    SELECT shares INTO trader_shares FROM market_holding
    WHERE account_id = trader AND term_id = p_term;
    trader_shares := coalesce(trader_shares, 0);

    IF term_status <> 'listed' OR (p_side = 'sell' AND p_shares > trader_shares) THEN
        result := 'refused'; RETURN;
    END IF;
    v_amount := market_curve_cost(
        CASE p_side WHEN 'buy' THEN term_supply ELSE term_supply - p_shares END,
        p_shares, term_p0, term_k);
    v_fee := market_fee(v_amount, p_fee_basis_points);
    v_cash_change := CASE p_side WHEN 'buy' THEN -(v_amount + v_fee) ELSE v_amount - v_fee END;
    IF trader_cash + v_cash_change < 0
        OR (p_limit IS NOT NULL AND p_side = 'buy' AND -v_cash_change > p_limit)
        OR (p_limit IS NOT NULL AND p_side = 'sell' AND v_cash_change < p_limit) THEN
        result := 'refused'; RETURN;
    END IF;

    SELECT id INTO v_fee_account FROM market_account WHERE kind = 'fees' AND shard = p_fee_shard;
    IF NOT FOUND THEN result := 'no_fee_account'; RETURN; END IF;

    UPDATE market_term
    SET supply = supply + v_sign * p_shares, reserve = reserve + v_sign * v_amount,
        version = version + 1
    WHERE id = p_term;
    UPDATE market_account SET cash = cash + v_cash_change WHERE id = trader;
    IF p_side = 'buy' THEN
        INSERT INTO market_holding AS h (account_id, term_id, shares)
        VALUES (trader, p_term, p_shares)
        ON CONFLICT (account_id, term_id) DO UPDATE SET shares = h.shares + EXCLUDED.shares;
    ELSE
        UPDATE market_holding SET shares = shares - p_shares
        WHERE account_id = trader AND term_id = p_term;
    END IF;
    traded_at := now();
    INSERT INTO market_ledgertransaction (kind, memo, created_at)
    VALUES ('trade', '', traded_at) RETURNING id INTO new_transaction;
    INSERT INTO market_entry (transaction_id, account_id, term_id, asset, amount)
    SELECT new_transaction, leg.account_id, leg.term_id, leg.asset, leg.amount
    FROM (VALUES
        (trader, NULL::bigint, 'cash', v_cash_change),
        (NULL, p_term, 'cash', v_sign * v_amount),
        (trader, p_term, 'shares', v_sign * p_shares),
        (NULL, p_term, 'shares', -v_sign * p_shares),
        (v_fee_account, NULL, 'cash', v_fee)
    ) AS leg (account_id, term_id, asset, amount)
    WHERE leg.amount <> 0;
    INSERT INTO market_trade (account_id, term_id, transaction_id, key, side, shares, amount,
        fee, supply_before, supply_after, price_before, price_after, term_version, created_at)
    VALUES (trader, p_term, new_transaction, p_key, p_side, p_shares, v_amount, v_fee,
        term_supply, term_supply + v_sign * p_shares, term_p0 + term_k * term_supply,
        term_p0 + term_k * (term_supply + v_sign * p_shares), term_version + 1, traded_at)
    RETURNING id INTO new_trade;
    IF v_fee <> 0 THEN
        UPDATE market_account SET cash = cash + v_fee WHERE id = v_fee_account;
    END IF;
    result := 'traded';
END
$fn$;
"""

DROP_SQL = """
DROP FUNCTION IF EXISTS market_place_trade(
    bigint, bigint, text, bigint, bigint, text, integer, integer
);
DROP FUNCTION IF EXISTS market_fee(numeric, integer);
DROP FUNCTION IF EXISTS market_curve_cost(bigint, bigint, bigint, bigint);
"""


def _on_postgres(sql: str):
    # Written when a SQLite mode existed; PostgreSQL is now the only database.
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("market", "0004_fewer_indexes_on_the_trade_path")]

    operations = [migrations.RunPython(_on_postgres(SQL), _on_postgres(DROP_SQL), elidable=False)]

"""The trade function tells its caller when a waiting limit order came within reach, and a
term that stops trading cancels its waiting orders.

- ``market_place_trade`` (first in 0005) is the same function with one more result,
  ``orders_reachable``: after a trade, whether an open order of the term can now fill (two
  index probes of ``order_open_by_limit``). ``market.trading`` runs the fill pass
  (``market.orders``) only then, so a trade on a term whose orders are all out of reach costs
  what it cost before. Its result type changes, so it is dropped and made again.
- ``term_closed_cancels_orders``: however a term is halted or delisted (the admin's action is a
  ``QuerySet.update()``, the change form a save, or psql), the same statement cancels its open
  orders, with the reason, and writes each owner a notice. The cancel takes the order rows'
  locks, so it waits for a fill in progress and a fill after it finds the order closed.
"""

from django.db import migrations

# History: the current definitions of these triggers and functions are in
# market/sql/place_trade.sql and market/sql/closed_terms.sql (loaded by market 0013). A fresh
# database still runs this SQL as written, step by step: change the file and load it again in a
# new migration, never this.
SQL = r"""
DROP FUNCTION IF EXISTS market_place_trade(
    bigint, bigint, text, bigint, bigint, text, integer, integer
);
CREATE FUNCTION market_place_trade(
    p_user bigint, p_term bigint, p_side text, p_shares bigint, p_limit bigint, p_key text,
    p_fee_basis_points integer, p_fee_shard integer,
    OUT result text, OUT new_trade bigint, OUT new_transaction bigint, OUT traded_at timestamptz,
    OUT trader bigint, OUT trader_cash bigint, OUT trader_shares bigint,
    OUT term_phrase text, OUT term_status text, OUT term_status_reason text, OUT term_p0 bigint,
    OUT term_k bigint, OUT term_supply bigint, OUT term_reserve bigint, OUT term_version bigint,
    OUT orders_reachable boolean)
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
    -- Is a waiting order now within reach of the new price? Two probes of the open orders'
    -- index (market.orders fills them, right after this commits): a buy whose limit covers
    -- the next share, a sell whose limit the last share still pays.
    orders_reachable := EXISTS (
            SELECT 1 FROM market_order
            WHERE term_id = p_term AND state = 'open' AND side = 'buy'
              AND limit_price >= term_p0 + term_k * (term_supply + v_sign * p_shares))
        OR (term_supply + v_sign * p_shares > 0 AND EXISTS (
            SELECT 1 FROM market_order
            WHERE term_id = p_term AND state = 'open' AND side = 'sell'
              AND limit_price <= term_p0 + term_k * (term_supply + v_sign * p_shares - 1)));
    result := 'traded';
END
$fn$;

CREATE FUNCTION market_term_closed_cancels_orders() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    v_reason text := CASE NEW.status
        WHEN 'halted' THEN 'trading in “' || NEW.phrase || '” was halted'
        ELSE '“' || NEW.phrase || '” was delisted' END
        || CASE WHEN btrim(NEW.status_reason) <> ''
            THEN ' (' || rtrim(btrim(NEW.status_reason), '.') || ')' ELSE '' END;
BEGIN
    WITH cancelled AS (
        UPDATE market_order
        SET state = 'cancelled', reason = upper(left(v_reason, 1)) || substr(v_reason, 2) || '.',
            closed_at = clock_timestamp()
        WHERE term_id = NEW.id AND state = 'open'
        RETURNING id, account_id, side, shares, filled
    )
    INSERT INTO market_notice (user_id, kind, term_id, order_id, text, created_at)
    SELECT a.user_id, 'order', NEW.id, c.id,
        'Your order to ' || c.side || ' ' || to_char(c.shares, 'FM999,999,999,999') || ' '
        || CASE WHEN c.shares = 1 THEN 'share' ELSE 'shares' END || ' of “' || NEW.phrase
        || '” was cancelled, ' || CASE WHEN c.filled = 0 THEN 'none'
            ELSE to_char(c.filled, 'FM999,999,999,999') END || ' filled: ' || v_reason || '.',
        now()
    FROM cancelled c JOIN market_account a ON a.id = c.account_id;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER term_closed_cancels_orders AFTER UPDATE OF status ON market_term
    FOR EACH ROW WHEN (OLD.status = 'listed' AND NEW.status <> 'listed')
    EXECUTE FUNCTION market_term_closed_cancels_orders();
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS term_closed_cancels_orders ON market_term;
DROP FUNCTION IF EXISTS market_term_closed_cancels_orders();
DROP FUNCTION IF EXISTS market_place_trade(
    bigint, bigint, text, bigint, bigint, text, integer, integer
);
"""


def _previous_function(apps, schema_editor) -> None:
    # Going back: 0005's function, as 0005 made it.
    from importlib import import_module

    schema_editor.execute(import_module("market.migrations.0005_place_trade_function").SQL)


class Migration(migrations.Migration):
    dependencies = [("market", "0010_limit_orders")]

    # Reversed last to first: the function is dropped, then 0005's made again.
    operations = [
        migrations.RunPython(migrations.RunPython.noop, _previous_function),
        migrations.RunSQL(SQL, REVERSE_SQL),
    ]

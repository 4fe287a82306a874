-- The fill pass: one server-side procedure call, so that a trade and all the fills it allows
-- cost two round trips (the trade, then this call) instead of some fourteen a fill.
--
-- market.orders.fill_pass calls CALL market_fill_orders(…) in autocommit mode. The procedure
-- first expires the term's due orders, then fills the term's reachable orders one at a time,
-- and COMMITs after each fill (a procedure called outside a transaction block may), so each
-- fill is still its own transaction with the locks of every market write, in their order:
--
--     term row (FOR UPDATE) → the chosen order row (FOR UPDATE) → the owner's account row
--     (FOR UPDATE) → market_place_trade (term and account again: held; the fee shard last)
--     → the fill row, the order's update and the owner's notice → COMMIT
--
-- Holding one term and one account at a time, as a trade does, is why the pass commits
-- between fills rather than running as one transaction: a single transaction holding several
-- owners' accounts (and a fee shard) would wait on trades that wait on it.
--
-- Each fill trades through market_place_trade (place_trade.sql), so it is an ordinary trade
-- in the ledger, checked and written by the one trade function, under the key
-- order:<id>:fill:<n>. The rules are those market.orders describes (limit then time
-- priority, the older of a reachable buy and sell first, as many shares as the limit, the
-- order, MARKET_MAX_SHARES_PER_TRADE and the owner's cash or shares allow; an order that cash
-- or shares stop short is filled as far as they go and cancelled with the reason). The
-- notices' sentences are written here, with the same words market.units writes money and
-- shares in; tests/market/test_fill_procedure.py holds the SQL helpers to the Python.
--
-- Moves: market_order, market_orderfill and market_notice, and through market_place_trade
-- everything a trade moves (market_term.stamp among them). It names the tables and columns as
-- they are: a migration that changes them must reload this file.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- Digits in groups of three, as Python's format(n, ',').
CREATE OR REPLACE FUNCTION public.market_group_digits(n numeric) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT regexp_replace(n::text, '(\d)(?=(\d{3})+$)', '\1,', 'g') $$;

-- market.units.format_credits with two places (unit: " credits" after the figure).
CREATE OR REPLACE FUNCTION public.market_format_credits(micro bigint, unit boolean DEFAULT true)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN micro < 0 AND r > 0 THEN U&'\2212' ELSE '' END
        || market_group_digits(div(r, 100)) || '.' || lpad(mod(r, 100)::text, 2, '0')
        || CASE WHEN unit THEN ' credits' ELSE '' END
    FROM (SELECT div(abs(micro::numeric) + 5000, 10000) AS r) rounded
$$;

-- market.units.format_shares.
CREATE OR REPLACE FUNCTION public.market_format_shares(n bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT market_group_digits(n) || CASE WHEN n = 1 THEN ' share' ELSE ' shares' END $$;

-- market.orders: "Your order to buy up to 10 shares of “KV cache” at most 1.20 credits a share".
CREATE OR REPLACE FUNCTION public.market_your_order(
    side text, shares bigint, limit_price bigint, phrase text)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT 'Your order to ' || CASE side WHEN 'buy' THEN 'buy' ELSE 'sell' END || ' up to '
        || market_format_shares(shares) || ' of “' || phrase || '” at '
        || CASE side WHEN 'buy' THEN 'most' ELSE 'least' END || ' '
        || market_format_credits(limit_price) || ' a share'
$$;

-- market.orders.reachable_shares: how many of ``remaining`` shares the limit allows at
-- ``supply`` (a buy's last share costs at most the limit, a sell's last share pays at least it).
CREATE OR REPLACE FUNCTION public.market_order_reachable_shares(
    side text, remaining bigint, limit_price bigint, supply bigint, p0 bigint, k bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN side = 'buy' THEN CASE
            WHEN limit_price < p0 + k * supply THEN 0
            WHEN k = 0 THEN remaining
            ELSE least(remaining, (limit_price - p0) / nullif(k, 0) - supply + 1) END
        ELSE CASE
            WHEN supply = 0 OR limit_price > p0 + k * (supply - 1) THEN 0
            WHEN k = 0 THEN least(remaining, supply)
            -- the least supply the last sale may leave: ceil((limit - p0) / k), at least 0
            ELSE least(remaining, supply - CASE WHEN limit_price <= p0 THEN 0
                ELSE div(limit_price::numeric - p0 + k - 1, nullif(k, 0))::bigint END) END
        END
$$;

-- The most of ``wanted`` shares a buyer with ``cash`` µ¢ can pay for at ``supply``, fee
-- included: min(wanted, market.curve.shares_for_total(...)), by bisection (wanted is at most
-- MARKET_MAX_SHARES_PER_TRADE, so some fourteen steps).
CREATE OR REPLACE FUNCTION public.market_affordable_shares(
    supply bigint, cash bigint, wanted bigint, p0 bigint, k bigint, basis_points integer)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$
DECLARE
    lo bigint := 0;
    hi bigint := wanted;
    mid bigint;
    amount numeric;
BEGIN
    WHILE lo < hi LOOP
        mid := (lo + hi + 1) / 2;
        amount := market_curve_cost(supply, mid, p0, k);
        IF amount + market_fee(amount, basis_points) <= cash THEN
            lo := mid;
        ELSE
            hi := mid - 1;
        END IF;
    END LOOP;
    RETURN lo;
END
$fn$;

-- Close the waiting orders whose time is up (of one term, or of all with NULL), telling each
-- owner; returns each told owner's user id, once per order.
CREATE OR REPLACE FUNCTION public.market_expire_orders(p_term bigint) RETURNS SETOF bigint
LANGUAGE plpgsql AS $fn$
BEGIN
    -- Two statements rather than "term_id = p_term OR p_term IS NULL", so the fill pass's
    -- (one term) keeps its plan on the open orders' index.
    IF p_term IS NULL THEN
        RETURN QUERY
        WITH expired AS (
            UPDATE market_order o SET state = 'expired', reason = 'Its time ran out.',
                closed_at = clock_timestamp()
            WHERE o.state = 'open' AND o.expires_at <= now()
            RETURNING o.id, o.account_id, o.term_id, o.side, o.shares, o.filled, o.limit_price
        ), told AS (
            INSERT INTO market_notice (user_id, kind, term_id, order_id, text, created_at)
            SELECT a.user_id, 'order', e.term_id, e.id,
                market_your_order(e.side, e.shares, e.limit_price, t.phrase) || ' expired with '
                || CASE WHEN e.filled = 0 THEN 'no shares' ELSE market_format_shares(e.filled) END
                || ' filled.', now()
            FROM expired e JOIN market_account a ON a.id = e.account_id
            JOIN market_term t ON t.id = e.term_id
            RETURNING user_id
        )
        SELECT user_id::bigint FROM told;
    ELSE
        RETURN QUERY
        WITH expired AS (
            UPDATE market_order o SET state = 'expired', reason = 'Its time ran out.',
                closed_at = clock_timestamp()
            WHERE o.term_id = p_term AND o.state = 'open' AND o.expires_at <= now()
            RETURNING o.id, o.account_id, o.term_id, o.side, o.shares, o.filled, o.limit_price
        ), told AS (
            INSERT INTO market_notice (user_id, kind, term_id, order_id, text, created_at)
            SELECT a.user_id, 'order', e.term_id, e.id,
                market_your_order(e.side, e.shares, e.limit_price, t.phrase) || ' expired with '
                || CASE WHEN e.filled = 0 THEN 'no shares' ELSE market_format_shares(e.filled) END
                || ' filled.', now()
            FROM expired e JOIN market_account a ON a.id = e.account_id
            JOIN market_term t ON t.id = e.term_id
            RETURNING user_id
        )
        SELECT user_id::bigint FROM told;
    END IF;
END
$fn$;

-- One fill pass of a term. Results: ``fills`` (trades made), ``told`` (the user id of each
-- notice written, to flag in the cache), ``unfinished`` (``p_max_fills`` steps were taken:
-- the worker carries on), ``lacking`` ('fee_account': the term's fee shard row does not exist
-- yet; the caller creates it and calls again; nothing of the step was written).
CREATE OR REPLACE PROCEDURE public.market_fill_orders(
    p_term bigint, p_triggered_at timestamptz, p_fee_basis_points integer, p_fee_shard integer,
    p_max_shares bigint, p_max_fills integer,
    INOUT fills integer DEFAULT NULL, INOUT told bigint[] DEFAULT NULL,
    INOUT unfinished boolean DEFAULT NULL, INOUT lacking text DEFAULT NULL)
LANGUAGE plpgsql AS $fn$
DECLARE
    v_phrase text;
    v_status text;
    v_p0 bigint;
    v_k bigint;
    v_supply bigint;
    v_buy bigint;
    v_buy_at timestamptz;
    v_sell bigint;
    v_sell_at timestamptz;
    v_chosen bigint;
    o market_order%ROWTYPE;
    v_user bigint;
    v_cash bigint;
    v_held bigint;
    v_wanted bigint;
    v_can bigint;
    v_amount bigint;
    v_fee bigint;
    v_total bigint;
    v_next bigint;
    v_filled bigint;
    v_fills integer;
    v_state text;
    v_reason text;
    v_text text;
    t record;
    v_step integer := 0;
BEGIN
    fills := 0;
    unfinished := false;
    lacking := NULL;
    told := ARRAY(SELECT market_expire_orders(p_term));
    COMMIT;
    LOOP
        IF v_step >= p_max_fills THEN
            unfinished := true;
            EXIT;
        END IF;
        v_step := v_step + 1;

        -- First a look without any lock: when nothing is within reach, the pass ends without
        -- waiting for the term's lock or writing a commit for it. Nothing is missed: whatever
        -- moves the price or adds an order later (a trade, a placed order) commits, then runs
        -- a pass of its own, which looks after that commit.
        SELECT status, p0, k, supply INTO v_status, v_p0, v_k, v_supply
        FROM market_term WHERE id = p_term;
        EXIT WHEN NOT FOUND OR v_status <> 'listed';
        EXIT WHEN NOT EXISTS (
                SELECT 1 FROM market_order
                WHERE term_id = p_term AND state = 'open' AND side = 'buy'
                  AND (expires_at IS NULL OR expires_at > now())
                  AND limit_price >= v_p0 + v_k * v_supply)
            AND NOT (v_supply > 0 AND EXISTS (
                SELECT 1 FROM market_order
                WHERE term_id = p_term AND state = 'open' AND side = 'sell'
                  AND (expires_at IS NULL OR expires_at > now())
                  AND limit_price <= v_p0 + v_k * (v_supply - 1)));

        SELECT phrase, status, p0, k, supply INTO v_phrase, v_status, v_p0, v_k, v_supply
        FROM market_term WHERE id = p_term FOR UPDATE;
        EXIT WHEN NOT FOUND OR v_status <> 'listed';

        -- The best reachable order of each side (limit, then time), as the index orders them.
        SELECT id, created_at INTO v_buy, v_buy_at FROM market_order
        WHERE term_id = p_term AND state = 'open' AND side = 'buy'
          AND (expires_at IS NULL OR expires_at > now())
          AND limit_price >= v_p0 + v_k * v_supply
        ORDER BY limit_price DESC, created_at, id LIMIT 1;
        v_sell := NULL;
        v_sell_at := NULL;
        IF v_supply > 0 THEN
            SELECT id, created_at INTO v_sell, v_sell_at FROM market_order
            WHERE term_id = p_term AND state = 'open' AND side = 'sell'
              AND (expires_at IS NULL OR expires_at > now())
              AND limit_price <= v_p0 + v_k * (v_supply - 1)
            ORDER BY limit_price, created_at, id LIMIT 1;
        END IF;
        -- Between a reachable buy and a reachable sell, the older goes first.
        IF v_buy IS NULL THEN
            v_chosen := v_sell;
        ELSIF v_sell IS NULL OR (v_buy_at, v_buy) < (v_sell_at, v_sell) THEN
            v_chosen := v_buy;
        ELSE
            v_chosen := v_sell;
        END IF;
        EXIT WHEN v_chosen IS NULL;

        -- A cancel or expiry takes this lock too: it waits for this fill, or this finds the
        -- order closed (the WHERE is checked again on the row's newest version).
        SELECT * INTO o FROM market_order WHERE id = v_chosen AND state = 'open' FOR UPDATE;
        IF NOT FOUND THEN
            COMMIT;
            CONTINUE;
        END IF;
        SELECT user_id, cash INTO v_user, v_cash
        FROM market_account WHERE id = o.account_id FOR UPDATE;
        SELECT coalesce(max(shares), 0) INTO v_held FROM market_holding
        WHERE account_id = o.account_id AND term_id = p_term;

        v_wanted := least(
            market_order_reachable_shares(
                o.side, o.shares - o.filled, o.limit_price, v_supply, v_p0, v_k),
            p_max_shares);
        IF v_wanted < 1 THEN
            RAISE EXCEPTION 'market_fill_orders: order % was chosen but cannot fill', o.id;
        END IF;
        IF o.side = 'buy' THEN
            v_can := market_affordable_shares(
                v_supply, v_cash, v_wanted, v_p0, v_k, p_fee_basis_points);
        ELSE
            v_can := least(v_wanted, v_held);
        END IF;

        v_total := 0;
        v_fee := 0;
        IF v_can > 0 THEN
            v_amount := market_curve_cost(
                CASE o.side WHEN 'buy' THEN v_supply ELSE v_supply - v_can END,
                v_can, v_p0, v_k);
            v_fee := market_fee(v_amount, p_fee_basis_points);
            v_total := CASE o.side WHEN 'buy' THEN v_amount + v_fee ELSE v_amount - v_fee END;
            -- The one trade function: it checks and writes the trade as for any trader; the
            -- limit is the exact total, so it trades exactly this or refuses.
            SELECT * INTO t FROM market_place_trade(
                v_user, p_term, o.side, v_can, v_total,
                'order:' || o.id || ':fill:' || (o.fills + 1),
                p_fee_basis_points, p_fee_shard);
            IF t.result = 'no_fee_account' THEN
                ROLLBACK;
                lacking := 'fee_account';
                RETURN;
            END IF;
            IF t.result <> 'traded' THEN
                RAISE EXCEPTION 'market_fill_orders: fill % of order % was %',
                    o.fills + 1, o.id, t.result;
            END IF;
            INSERT INTO market_orderfill (order_id, number, trade_id, triggered_at)
            VALUES (o.id, o.fills + 1, t.new_trade, p_triggered_at);
            fills := fills + 1;
        END IF;

        v_reason := NULL;
        IF v_can < v_wanted THEN
            IF o.side = 'sell' THEN
                v_reason := CASE WHEN v_held = 0
                    THEN 'You no longer hold any shares of “' || v_phrase || '” to sell.'
                    ELSE 'You held only ' || market_format_shares(v_held) || ' of “' || v_phrase
                        || '”, and they were sold.' END;
            ELSE
                v_next := v_p0 + v_k * (v_supply + v_can);
                v_reason := 'Not enough cash: the next share cost '
                    || market_format_credits(
                        (v_next + market_fee(v_next, p_fee_basis_points))::bigint)
                    || ' with the fee, and you had ' || market_format_credits(v_cash - v_total)
                    || '.';
            END IF;
        END IF;
        v_filled := o.filled + v_can;
        v_fills := o.fills + CASE WHEN v_can > 0 THEN 1 ELSE 0 END;
        v_state := CASE WHEN v_reason IS NOT NULL THEN 'cancelled'
            WHEN v_filled = o.shares THEN 'filled' ELSE 'open' END;
        -- closed_at: the clock now, with the term's lock held, rather than now() (this
        -- transaction's start, and so its trade's time): a transaction may start, then wait
        -- for the term's lock while an earlier fill of this order commits with a later now().
        -- Every earlier fill committed before this lock was granted, so none is after this.
        UPDATE market_order SET filled = v_filled, fills = v_fills, state = v_state,
            reason = coalesce(v_reason, reason),
            closed_at = CASE WHEN v_state <> 'open' THEN clock_timestamp() END
        WHERE id = o.id;

        v_text := market_your_order(o.side, o.shares, o.limit_price, v_phrase);
        IF v_can > 0 THEN
            -- The price and the fee apart: the price is what the limit bounds, and a total
            -- with the fee in it reads as a limit broken (at most 1.25 a share, 1.26 paid).
            v_text := v_text || CASE o.side WHEN 'buy' THEN ' bought ' ELSE ' sold ' END
                || market_format_shares(v_can) || ' for ' || market_format_credits(v_amount)
                || CASE o.side WHEN 'buy' THEN ', plus a fee of ' ELSE ', less a fee of ' END
                || market_format_credits(v_fee)
                || CASE WHEN v_state = 'filled' THEN ', and is filled.'
                    WHEN v_reason IS NOT NULL THEN ', then was cancelled: ' || v_reason
                    ELSE '; ' || market_format_shares(o.shares - v_filled)
                        || CASE WHEN o.shares - v_filled = 1 THEN ' still waits for the price.'
                            ELSE ' still wait for the price.' END END;
        ELSE
            v_text := v_text || ' was cancelled: ' || v_reason;
        END IF;
        INSERT INTO market_notice (user_id, kind, term_id, order_id, text, created_at)
        VALUES (v_user, 'order', p_term, o.id, v_text, now());
        told := told || v_user;
        COMMIT;
    END LOOP;
END
$fn$;

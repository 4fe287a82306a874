-- A term that stops trading cancels its waiting orders.
--
-- However a term is halted or delisted (the admin's action is a QuerySet.update(), the change
-- form a save, or psql), the same statement cancels its open orders, with the reason, and
-- writes each owner a notice.
--
-- Moves: market_order (state, reason, closed_at) and market_notice, on an UPDATE OF status
-- of market_term from 'listed' to anything else.
--
-- Locks: the cancel takes the order rows' locks, so it waits for a fill in progress
-- (fill_orders.sql holds the order's lock while it fills), and a fill after it finds the
-- order closed.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

CREATE OR REPLACE FUNCTION public.market_term_closed_cancels_orders() RETURNS trigger
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

CREATE OR REPLACE TRIGGER term_closed_cancels_orders AFTER UPDATE OF status ON market_term
    FOR EACH ROW WHEN (OLD.status = 'listed' AND NEW.status <> 'listed')
    EXECUTE FUNCTION market_term_closed_cancels_orders();

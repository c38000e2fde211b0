-- +goose Up
-- Invoice and receipt numbers are gapless per organization, so drawing one takes the
-- organization's counter row lock until the transaction ends. Drawn when the order was
-- inserted, that lock was held through the rest of the purchase, its charge included, and
-- every purchase of an organization waited for the previous one, in whichever process it
-- ran. The numbers are now drawn by a deferred constraint trigger, the last thing each
-- transaction does before it commits: the lock is held for the commit alone. A rolled-back
-- transaction still gives its numbers back, and the orders of one transaction are numbered
-- in the order their rows were written.
--
-- An order needs an invoice number as soon as it exists and a receipt number once it is
-- paid (refunds keep it). The WHEN clause skips the trigger for rows that need nothing, and
-- the function reads the row as it is at commit, since a row inserted and then paid in one
-- transaction queues two firings and the first numbers both.

-- +goose StatementBegin
CREATE FUNCTION number_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o record;
    seq record;
    wants_receipt boolean;
BEGIN
    SELECT id, organization_id, status, invoice_number, receipt_number INTO o
    FROM orders WHERE id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    wants_receipt := o.receipt_number IS NULL AND o.status IN ('paid', 'partially_refunded', 'refunded');
    IF o.invoice_number IS NOT NULL AND NOT wants_receipt THEN
        RETURN NULL;
    END IF;
    UPDATE organizations
    SET invoice_next_number = invoice_next_number + CASE WHEN o.invoice_number IS NULL THEN 1 ELSE 0 END,
        receipt_next_number = receipt_next_number + CASE WHEN wants_receipt THEN 1 ELSE 0 END
    WHERE id = o.organization_id
    RETURNING upper(slug) AS prefix, invoice_next_number - 1 AS invoice, receipt_next_number - 1 AS receipt
    INTO seq;
    UPDATE orders SET
        invoice_number = coalesce(invoice_number,
            seq.prefix || '-' || lpad(seq.invoice::text, greatest(4, length(seq.invoice::text)), '0')),
        receipt_number = CASE WHEN wants_receipt THEN
            'RCPT-' || seq.prefix || '-' || lpad(seq.receipt::text, greatest(4, length(seq.receipt::text)), '0')
            ELSE receipt_number END
    WHERE id = o.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER orders_number AFTER INSERT OR UPDATE OF status ON orders
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.invoice_number IS NULL
        OR (NEW.receipt_number IS NULL AND NEW.status IN ('paid', 'partially_refunded', 'refunded')))
    EXECUTE FUNCTION number_order();

-- +goose Down
DROP TRIGGER orders_number ON orders;
DROP FUNCTION number_order();

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
-- The counters also leave the organizations row for a table of their own. Every row that
-- references an organization (each order, event, checkout, customer) takes a key-share lock
-- on it, and sharing a row that other transactions keep updating costs a multixact per
-- check; the organization row now changes only when the organization does.
--
-- An order needs an invoice number as soon as it exists, unless it is a draft (a draft is
-- numbered when it leaves that status), and a receipt number once it is paid (refunds keep
-- it). The WHEN clause skips the trigger for rows that need nothing, and
-- the function reads the row as it is at commit, since a row inserted and then paid in one
-- transaction queues two firings and the first numbers both.
CREATE TABLE order_numbers (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    -- The last numbers drawn; 0 when none was.
    invoice_last bigint NOT NULL DEFAULT 0 CHECK (invoice_last >= 0),
    receipt_last bigint NOT NULL DEFAULT 0 CHECK (receipt_last >= 0)
);
INSERT INTO order_numbers (organization_id, invoice_last, receipt_last)
SELECT id, invoice_next_number - 1, receipt_next_number - 1 FROM organizations
WHERE invoice_next_number > 1 OR receipt_next_number > 1;
ALTER TABLE organizations DROP COLUMN invoice_next_number, DROP COLUMN receipt_next_number;

-- +goose StatementBegin
CREATE FUNCTION number_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o record;
    drawn record;
    prefix text;
    wants_invoice int;
    wants_receipt int;
BEGIN
    SELECT id, organization_id, status, invoice_number, receipt_number INTO o
    FROM orders WHERE id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    wants_invoice := CASE WHEN o.invoice_number IS NULL AND o.status <> 'draft' THEN 1 ELSE 0 END;
    wants_receipt := CASE WHEN o.receipt_number IS NULL
        AND o.status IN ('paid', 'partially_refunded', 'refunded') THEN 1 ELSE 0 END;
    IF wants_invoice = 0 AND wants_receipt = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO order_numbers AS n (organization_id, invoice_last, receipt_last)
    VALUES (o.organization_id, wants_invoice, wants_receipt)
    ON CONFLICT (organization_id) DO UPDATE
        SET invoice_last = n.invoice_last + wants_invoice, receipt_last = n.receipt_last + wants_receipt
    RETURNING n.invoice_last, n.receipt_last INTO drawn;
    SELECT upper(slug) INTO prefix FROM organizations WHERE id = o.organization_id;
    UPDATE orders SET
        invoice_number = CASE WHEN wants_invoice = 1 THEN
            prefix || '-' || lpad(drawn.invoice_last::text, greatest(4, length(drawn.invoice_last::text)), '0')
            ELSE invoice_number END,
        receipt_number = CASE WHEN wants_receipt = 1 THEN
            'RCPT-' || prefix || '-' || lpad(drawn.receipt_last::text, greatest(4, length(drawn.receipt_last::text)), '0')
            ELSE receipt_number END
    WHERE id = o.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER orders_number AFTER INSERT OR UPDATE OF status ON orders
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN ((NEW.invoice_number IS NULL AND NEW.status <> 'draft')
        OR (NEW.receipt_number IS NULL AND NEW.status IN ('paid', 'partially_refunded', 'refunded')))
    EXECUTE FUNCTION number_order();

-- +goose Down
DROP TRIGGER orders_number ON orders;
DROP FUNCTION number_order();
ALTER TABLE organizations ADD COLUMN invoice_next_number bigint NOT NULL DEFAULT 1,
    ADD COLUMN receipt_next_number bigint NOT NULL DEFAULT 1;
UPDATE organizations org SET invoice_next_number = n.invoice_last + 1, receipt_next_number = n.receipt_last + 1
FROM order_numbers n WHERE n.organization_id = org.id;
DROP TABLE order_numbers;

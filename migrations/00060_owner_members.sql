-- +goose Up
-- Every customer has an owner member, created in the transaction that creates the customer
-- from its email, name and external id and dated as the customer. This gives one to the live
-- customers made before: a live member that already holds the customer's email (ignoring
-- case) becomes the owner, as it is that person; otherwise a new owner is made, without the
-- external id when another member of the customer holds it. A customer without an email (a
-- team created without one) has nobody to make owner and is left as it is.
UPDATE members m SET role = 'owner', modified_at = now()
FROM customers c
WHERE m.customer_id = c.id AND m.deleted_at IS NULL AND c.deleted_at IS NULL AND c.email IS NOT NULL
  AND lower(m.email) = lower(c.email)
  AND NOT EXISTS (SELECT 1 FROM members o WHERE o.customer_id = c.id AND o.role = 'owner' AND o.deleted_at IS NULL);

INSERT INTO members (organization_id, customer_id, email, name, external_id, role, created_at)
SELECT c.organization_id, c.id, btrim(c.email), c.name,
       CASE WHEN EXISTS (SELECT 1 FROM members x WHERE x.customer_id = c.id AND x.external_id = c.external_id
                         AND x.deleted_at IS NULL) THEN NULL ELSE c.external_id END,
       'owner', c.created_at
FROM customers c
WHERE c.deleted_at IS NULL AND c.email IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM members o WHERE o.customer_id = c.id AND o.role = 'owner' AND o.deleted_at IS NULL)
ON CONFLICT DO NOTHING;

-- +goose Down
-- The owners stay: they cannot be told from the owners made with their customers since.
SELECT 1;

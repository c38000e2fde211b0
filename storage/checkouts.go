package storage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// checkoutColumns selects a checkout with its effective status: an open checkout past
// expires_at reads as expired even before the expiry loop has written it, so every reader
// (and the status filter and sort) agrees at the instant given as the now argument.
func checkoutColumns(now int) string {
	return fmt.Sprintf(`c.id, c.created_at, c.modified_at, c.organization_id, c.payment_processor,
	CASE WHEN c.status = 'open' AND c.expires_at <= $%d THEN 'expired' ELSE c.status END AS status,
	c.client_secret, c.expires_at, c.success_url, c.return_url, c.embed_origin, c.currency, c.amount,
	c.discount_amount, c.net_amount, c.tax_amount, c.tax_behavior, c.total_amount, c.seats, c.min_seats,
	c.max_seats, c.allow_trial, c.trial_interval, c.trial_interval_count, c.trial_end, c.product_id,
	c.product_price_id, c.discount_id, c.subscription_id, c.allow_discount_codes, c.require_billing_address,
	c.is_business_customer, c.customer_id, c.external_customer_id, c.customer_name, c.customer_email,
	host(c.customer_ip_address) AS customer_ip_address, c.customer_billing_name, c.customer_billing_address,
	c.customer_tax_id, c.locale, c.payment_method_type, c.payment_processor_metadata, c.customer_metadata,
	c.custom_field_data, c.metadata`, now)
}

// effectiveStatus is the status expression of checkoutColumns, for filters and sorting.
func effectiveStatus(now int) string {
	return fmt.Sprintf("(CASE WHEN c.status = 'open' AND c.expires_at <= $%d THEN 'expired' ELSE c.status END)", now)
}

// CreateCheckout inserts a checkout and the products it offers, in order, and returns it as
// of now.
func CreateCheckout(ctx context.Context, q sqlx.ExtContext, w CheckoutWrite, productIDs []uuid.UUID, now time.Time) (*Checkout, error) {
	cols, params, args := insertLists(w)
	var id uuid.UUID
	if err := sqlx.GetContext(ctx, q, &id, `INSERT INTO checkouts (`+cols+`)
		VALUES (`+params+`) RETURNING id`, args...); err != nil {
		return nil, mapErr(err)
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO checkout_products (checkout_id, product_id, organization_id, "order")
		SELECT $1, u.pid, c.organization_id, u.ord FROM checkouts c, unnest($2::uuid[]) WITH ORDINALITY AS u(pid, ord)
		WHERE c.id = $1`, id, pq.Array(productIDs)); err != nil {
		return nil, mapErr(err)
	}
	return getCheckout(ctx, q, "c.id = $2", id, now, false)
}

func getCheckout(ctx context.Context, q sqlx.ExtContext, where string, arg any, now time.Time, lock bool, more ...any) (*Checkout, error) {
	query := `SELECT ` + checkoutColumns(1) + ` FROM checkouts c WHERE ` + where
	if lock {
		query += " FOR UPDATE"
	}
	var c Checkout
	err := sqlx.GetContext(ctx, q, &c, query, append([]any{now, arg}, more...)...)
	return &c, mapErr(err)
}

// GetCheckout reads a checkout of the given organizations as of now.
func GetCheckout(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, now time.Time) (*Checkout, error) {
	return getCheckout(ctx, q, "c.id = $2 AND c.organization_id = ANY($3)", id, now, false, pq.Array(orgs))
}

// GetCheckoutByClientSecret reads a checkout by its client secret, the buyer's credential.
func GetCheckoutByClientSecret(ctx context.Context, q sqlx.ExtContext, secret string, now time.Time) (*Checkout, error) {
	return getCheckout(ctx, q, "c.client_secret = $2", secret, now, false)
}

// LockCheckout reads a checkout of the given organizations FOR UPDATE, so the caller's
// transaction is the only one changing it until it ends.
func LockCheckout(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, now time.Time) (*Checkout, error) {
	return getCheckout(ctx, q, "c.id = $2 AND c.organization_id = ANY($3)", id, now, true, pq.Array(orgs))
}

// LockCheckoutByClientSecret is LockCheckout for the buyer's client-secret flow.
func LockCheckoutByClientSecret(ctx context.Context, q sqlx.ExtContext, secret string, now time.Time) (*Checkout, error) {
	return getCheckout(ctx, q, "c.client_secret = $2", secret, now, true)
}

// UpdateCheckout writes the set fields of u to a checkout and returns it as of now.
func UpdateCheckout(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, u CheckoutUpdate, now time.Time) (*Checkout, error) {
	sets, args := setClause("modified_at = now()", u, []any{id})
	if _, err := q.ExecContext(ctx, `UPDATE checkouts SET `+sets+` WHERE id = $1`, args...); err != nil {
		return nil, mapErr(err)
	}
	return getCheckout(ctx, q, "c.id = $2", id, now, false)
}

// SetCheckoutStatus moves a checkout from one status to another and reports whether it was
// in the expected status, so a transition never overwrites a concurrent one.
func SetCheckoutStatus(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, from, to CheckoutStatus) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE checkouts SET status = $3, modified_at = now()
		WHERE id = $1 AND status = $2`, id, from, to)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ExpiredCheckout is a checkout the expiry sweep closed.
type ExpiredCheckout struct {
	ID             uuid.UUID `db:"id"`
	OrganizationID uuid.UUID `db:"organization_id"`
}

// ExpireCheckouts marks up to limit open checkouts past expires_at as expired. Rows another
// process is already expiring are skipped, so several sweepers can run at once.
func ExpireCheckouts(ctx context.Context, q sqlx.ExtContext, now time.Time, limit int) ([]ExpiredCheckout, error) {
	var rows []ExpiredCheckout
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE checkouts SET status = 'expired', modified_at = now()
		WHERE id IN (SELECT id FROM checkouts WHERE status = 'open' AND expires_at <= $1
			ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING id, organization_id`, now, limit)
	return rows, mapErr(err)
}

// ProductsByCheckouts loads the products each checkout offers for a dataloader, in the
// checkout's order, one slice per key.
func ProductsByCheckouts(ctx context.Context, q sqlx.ExtContext, checkoutIDs []uuid.UUID) ([][]*Product, error) {
	type row struct {
		CheckoutID uuid.UUID `db:"checkout_id"`
		Product
	}
	var rows []*row
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT cp.checkout_id, `+productColumnsP+`
		FROM checkout_products cp JOIN products p ON p.id = cp.product_id
		WHERE cp.checkout_id = ANY($1) ORDER BY cp."order", p.created_at`, pq.Array(checkoutIDs)); err != nil {
		return nil, mapErr(err)
	}
	return groupJoined(checkoutIDs, rows, func(r *row) uuid.UUID { return r.CheckoutID },
		func(r *row) Product { return r.Product }), nil
}

// PricesByIDs loads prices for a dataloader, archived ones included (a checkout or order
// keeps the price it was made with), one per key in key order, nil where missing.
func PricesByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*ProductPrice, error) {
	var rows []*ProductPrice
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+priceColumns+` FROM product_prices WHERE id = ANY($1)`,
		pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(p *ProductPrice) uuid.UUID { return p.ID }), nil
}

// PriceMeter is what a metered price shows of its meter (the contract's ProductPriceMeter).
type PriceMeter struct {
	ID               uuid.UUID `db:"id"`
	Name             string    `db:"name"`
	Unit             string    `db:"unit"`
	CustomLabel      *string   `db:"custom_label"`
	CustomMultiplier *int      `db:"custom_multiplier"`
}

// PriceMetersByIDs loads meters for a dataloader, one per key in key order, nil where missing.
func PriceMetersByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*PriceMeter, error) {
	var rows []*PriceMeter
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT id, name, unit, custom_label, custom_multiplier
		FROM meters WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(m *PriceMeter) uuid.UUID { return m.ID }), nil
}

// FindCustomerByEmail reads the live customer of an organization with an email, ignoring
// case as the unique index does.
func FindCustomerByEmail(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, email string) (*Customer, error) {
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+customerColumns+` FROM customers
		WHERE organization_id = $1 AND lower(email) = lower($2) AND deleted_at IS NULL`, orgID, email)
	return &c, mapErr(err)
}

// ReopenStaleCheckouts turns checkouts left `confirmed` since before `before` back to open;
// one waiting for its payment to settle is not stale, and only the settling reopens it.
// Confirming commits `confirmed` and then completes the purchase in a second transaction
// that holds the row lock; a checkout still confirmed and unlocked once its lease is over
// is one whose second step never committed (a crash), so nothing was bought and it may be
// confirmed again (the charge's idempotency key is the checkout id, so a charge that did go
// through is replayed, not repeated).
func ReopenStaleCheckouts(ctx context.Context, q sqlx.ExtContext, before time.Time, limit int) ([]ExpiredCheckout, error) {
	var rows []ExpiredCheckout
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE checkouts SET status = 'open', modified_at = now()
		WHERE id IN (SELECT id FROM checkouts WHERE status = 'confirmed' AND pending_payment IS NULL AND modified_at <= $1
			ORDER BY modified_at LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING id, organization_id`, before, limit)
	return rows, mapErr(err)
}

// CheckoutChargeKey is the idempotency key of the checkout's next charge: the checkout's
// id, with the number of attempts that ended without taking money after it once there
// were some.
func CheckoutChargeKey(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (string, error) {
	var attempts int
	if err := sqlx.GetContext(ctx, q, &attempts, `SELECT charge_attempts FROM checkouts WHERE id = $1`, id); err != nil {
		return "", mapErr(err)
	}
	if attempts == 0 {
		return id.String(), nil
	}
	return id.String() + ":" + strconv.Itoa(attempts), nil
}

// EndCheckoutChargeAttempt records that the checkout's charge ended taking no money, so the
// next one charges under a new key.
func EndCheckoutChargeAttempt(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) error {
	_, err := q.ExecContext(ctx, `UPDATE checkouts SET charge_attempts = charge_attempts + 1 WHERE id = $1`, id)
	return mapErr(err)
}

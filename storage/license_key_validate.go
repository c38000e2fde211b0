package storage

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// LicenseKeyCheck is one validation of a key: what the caller claims about it and the usage
// to add when the claims hold. Whether the caller may see OrganizationID is the use case's
// to decide before it asks.
type LicenseKeyCheck struct {
	OrganizationID uuid.UUID
	Key            string
	ActivationID   *uuid.UUID
	// Conditions must equal the activation's when it has any; compared as jsonb, so both
	// sides are normalised by the caller the same way.
	Conditions     JSONMap
	BenefitID      *uuid.UUID
	CustomerID     *uuid.UUID
	IncrementUsage int
	Now            time.Time
}

// ValidatedLicenseKey is a key that passed a validation, as it is after the validation,
// with the activation the validation named.
type ValidatedLicenseKey struct {
	LicenseKey
	Activation *LicenseKeyActivation
}

// validateLicenseKeySQL is the whole validation in one statement: every check is in the
// UPDATE's WHERE, so PostgreSQL re-checks them on the newest row version when concurrent
// validations race (no lost usage increment, no usage past the limit), and a key that
// fails them is left untouched. The caller finds out which check failed only on that path.
// The named activation is joined in the UPDATE itself and comes back with the key; its part
// ($7, $8) is present only in the variant that uses it, so the common validation plans and
// runs as the plain keyed update it is. The key's customer is not joined: that join cost a
// quarter of the statement, and the caller keeps customers in a cache instead.
func validateLicenseKeySQL(activation bool) string {
	from, where, returning := "", "", `NULL::uuid, NULL::text, NULL::jsonb, NULL::timestamptz, NULL::timestamptz`
	if activation {
		from = `
	FROM license_key_activations a`
		where = `
		AND a.id = $7 AND a.license_key_id = k.id AND a.deleted_at IS NULL
		AND (a.conditions = '{}' OR a.conditions = $8::jsonb)`
		returning = `a.id, a.label, a.meta, a.created_at, a.modified_at`
	}
	return `UPDATE license_keys k SET validations = k.validations + 1, last_validated_at = $6,
		usage = k.usage + $5, modified_at = $6` + from + `
	WHERE k.organization_id = $1 AND k.key = $2 AND k.deleted_at IS NULL
		AND k.status = 'granted' AND (k.expires_at IS NULL OR k.expires_at > $6)
		AND ($3::uuid IS NULL OR k.benefit_id = $3)
		AND ($4::uuid IS NULL OR k.customer_id = $4)
		AND ($5 = 0 OR k.limit_usage IS NULL OR $5::bigint <= k.limit_usage::bigint - k.usage)
		AND k.usage::bigint + $5 <= 2147483647` + where + `
	RETURNING ` + prefixed("k", licenseKeyColumns) + `, ` + returning
}

// LicenseKeyValidator runs validations through a prepared statement, so PostgreSQL parses
// and plans the validation once per connection instead of on every call: on the hottest
// path, planning cost more than running it.
//
// Validations also queue for the pool in arrival order. When every connection is busy,
// database/sql hands a freed connection to a random waiter, so under load some validations
// waited many turns and the slowest percent took several times the median; slots, one per
// pool connection, make them wait first come, first served (a channel's blocked senders
// are woken in order) and leave database/sql nothing to pick among.
type LicenseKeyValidator struct {
	plain, activation *sqlx.Stmt    // without and with an activation named
	slots             chan struct{} // nil when the pool is unbounded
}

// PrepareLicenseKeyValidator prepares the validation's variants on the pool; database/sql
// prepares each again on every connection that runs it.
func PrepareLicenseKeyValidator(ctx context.Context, db *sqlx.DB) (*LicenseKeyValidator, error) {
	var v LicenseKeyValidator
	if n := db.Stats().MaxOpenConnections; n > 0 {
		v.slots = make(chan struct{}, n)
	}
	var err error
	if v.plain, err = db.PreparexContext(ctx, validateLicenseKeySQL(false)); err != nil {
		return nil, err
	}
	if v.activation, err = db.PreparexContext(ctx, validateLicenseKeySQL(true)); err != nil {
		return nil, err
	}
	return &v, nil
}

// Validate records a successful validation (validations + 1, last_validated_at, usage +
// increment) and returns the key, or ErrNotFound when the key does not exist or a check
// failed; [DiagnoseLicenseKey] then tells which.
func (v *LicenseKeyValidator) Validate(ctx context.Context, c LicenseKeyCheck) (*ValidatedLicenseKey, error) {
	args := []any{c.OrganizationID, c.Key, c.BenefitID, c.CustomerID, c.IncrementUsage, c.Now}
	stmt := v.plain
	if c.ActivationID != nil {
		stmt = v.activation
		args = append(args, c.ActivationID, c.Conditions)
	}
	var (
		out        ValidatedLicenseKey
		activation LicenseKeyActivation
		actID      *uuid.UUID
		actLabel   *string
		actCreated *time.Time
	)
	k := &out.LicenseKey
	if v.slots != nil {
		select {
		case v.slots <- struct{}{}:
			defer func() { <-v.slots }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// Scanned by hand, in the statement's column order (licenseKeyColumns, then the
	// activation): on this path sqlx's reflective mapping cost more than the scan.
	err := stmt.QueryRowContext(ctx, args...).Scan(
		&k.ID, &k.CreatedAt, &k.ModifiedAt, &k.OrganizationID, &k.BenefitID, &k.CustomerID, &k.MemberID,
		&k.Key, &k.DisplayKey, &k.Status, &k.LimitActivations, &k.Usage, &k.LimitUsage, &k.Validations,
		&k.LastValidatedAt, &k.ExpiresAt,
		&actID, &actLabel, &activation.Meta, &actCreated, &activation.ModifiedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	if actID != nil {
		activation.ID, activation.LicenseKeyID, activation.OrganizationID = *actID, k.ID, k.OrganizationID
		activation.Label, activation.CreatedAt = *actLabel, *actCreated
		out.Activation = &activation
	}
	return &out, nil
}

// LicenseKeyState is what the validation checks read, for telling why a validation failed.
type LicenseKeyState struct {
	LicenseKey
	// ActivationFound is set when the named activation exists, belongs to the key and is
	// live; ActivationConditionsMatch when its conditions are empty or equal the request's.
	ActivationFound           bool `db:"activation_found"`
	ActivationConditionsMatch bool `db:"activation_conditions_match"`
}

// DiagnoseLicenseKey reads the key a failed [LicenseKeyValidator.Validate] named, without locking it;
// ErrNotFound when no such key is visible.
func DiagnoseLicenseKey(ctx context.Context, q sqlx.ExtContext, c LicenseKeyCheck) (*LicenseKeyState, error) {
	var s LicenseKeyState
	err := sqlx.GetContext(ctx, q, &s, `SELECT `+prefixed("k", licenseKeyColumns)+`,
			a.id IS NOT NULL AS activation_found,
			coalesce(a.conditions = '{}' OR a.conditions = $4::jsonb, false) AS activation_conditions_match
		FROM license_keys k LEFT JOIN license_key_activations a
			ON a.id = $3 AND a.license_key_id = k.id AND a.deleted_at IS NULL
		WHERE k.organization_id = $1 AND k.key = $2 AND k.deleted_at IS NULL`,
		c.OrganizationID, c.Key, c.ActivationID, c.Conditions)
	return &s, mapErr(err)
}

// prefixed qualifies a column list with a table alias, for statements that join tables
// sharing column names.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

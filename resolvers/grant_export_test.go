package resolvers

import (
	"context"

	"github.com/jmoiron/sqlx"

	"till/storage"
)

// GrantScope exposes grantScope to the package's external tests: granting is a contract
// between use cases with no API of its own, so the tests call it as those use cases do.
type GrantScope = grantScope

// GrantBenefits runs grantBenefits in a transaction of its own.
func (r *Resolver) GrantBenefits(ctx context.Context, scope GrantScope) error {
	return storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error { return r.grantBenefits(ctx, tx, scope) })
}

// RevokeBenefits runs revokeBenefits in a transaction of its own.
func (r *Resolver) RevokeBenefits(ctx context.Context, scope GrantScope) error {
	return storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error { return r.revokeBenefits(ctx, tx, scope) })
}

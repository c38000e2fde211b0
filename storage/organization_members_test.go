package storage_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// TestEveryOwnedTableIsPlaced: each table with a uuid id and an organization_id is either
// one whose ids operations name (the role guard looks ids up there) or declared unnamed, so a
// new table cannot be forgotten by the guard's lookup.
func TestEveryOwnedTableIsPlaced(t *testing.T) {
	db := storagetest.New(t)
	var tables []string
	if err := db.Select(&tables, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
		  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped)
		  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'id'
		    AND a.atttypid = 'uuid'::regtype AND NOT a.attisdropped)
		ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	placed := slices.Sorted(slices.Values(slices.Concat(storage.OwnedTables, storage.OwnershipUnnamed)))
	if diff := cmp.Diff(tables, placed); diff != "" {
		t.Errorf("tables with an id and an organization (-catalog +placed):\n%s", diff)
	}
}

// TestOrganizationsHoldAny: an id is held by an organization when it is the organization or
// an object of it; an object of another organization, or no object at all, is not.
func TestOrganizationsHoldAny(t *testing.T) {
	ctx := context.Background()
	db := storagetest.New(t)
	a, b := newOrg(t, db), newOrg(t, db)
	email := "held@example.com"
	c, err := storage.CreateCustomer(ctx, db, b, storage.CustomerWrite{Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ids  []uuid.UUID
		orgs []uuid.UUID
		want bool
	}{
		{"the organization's own id", []uuid.UUID{uuid.New(), a}, []uuid.UUID{a}, true},
		{"a customer of the organization", []uuid.UUID{c.ID}, []uuid.UUID{a, b}, true},
		{"a customer of another organization", []uuid.UUID{c.ID}, []uuid.UUID{a}, false},
		{"an id of nothing", []uuid.UUID{uuid.New()}, []uuid.UUID{a, b}, false},
		{"no organizations", []uuid.UUID{a}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := storage.OrganizationsHoldAny(ctx, db, tt.ids, tt.orgs)
			if err != nil || got != tt.want {
				t.Errorf("OrganizationsHoldAny = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestAnOrganizationKeepsAnOwner: the database refuses any change that leaves an organization
// that has an owner without one, and lets the organization or the user go with their
// memberships.
func TestAnOrganizationKeepsAnOwner(t *testing.T) {
	ctx := context.Background()
	db := storagetest.New(t)
	org := newOrg(t, db)
	owner, other := newMember(t, db, org, "owner"), newMember(t, db, org, "admin")
	refused := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrLastOwner) {
			t.Fatalf("err = %v, want ErrLastOwner", err)
		}
	}
	t.Run("the last owner cannot be demoted", func(t *testing.T) {
		_, err := storage.SetOrganizationMemberRole(ctx, db, org, owner, "admin")
		refused(t, err)
	})
	t.Run("the last owner cannot be removed", func(t *testing.T) {
		_, err := storage.RemoveOrganizationMember(ctx, db, org, owner)
		refused(t, err)
	})
	t.Run("nor deleted by hand", func(t *testing.T) {
		_, err := db.Exec(`DELETE FROM user_organizations WHERE user_id = $1`, owner)
		if err == nil {
			t.Fatal("the last owner's membership was deleted")
		}
	})
	t.Run("with a second owner the first may step down", func(t *testing.T) {
		if _, err := storage.SetOrganizationMemberRole(ctx, db, org, other, "owner"); err != nil {
			t.Fatal(err)
		}
		if _, err := storage.SetOrganizationMemberRole(ctx, db, org, owner, "member"); err != nil {
			t.Fatal(err)
		}
		_, err := storage.RemoveOrganizationMember(ctx, db, org, other)
		refused(t, err)
	})
	t.Run("an organization deleted takes its memberships along", func(t *testing.T) {
		if _, err := db.Exec(`DELETE FROM organizations WHERE id = $1`, org); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a user deleted takes their memberships along", func(t *testing.T) {
		org := newOrg(t, db)
		owner := newMember(t, db, org, "owner")
		if _, err := db.Exec(`DELETE FROM users WHERE id = $1`, owner); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOwnersDemotingEachOtherAtOnceLeaveOne races pairs of owners demoting each other: in
// every organization exactly one demotion wins and one owner is left.
func TestOwnersDemotingEachOtherAtOnceLeaveOne(t *testing.T) {
	ctx := context.Background()
	db := storagetest.New(t)
	const rounds = 50
	orgs := make([]uuid.UUID, rounds)
	pairs := make([][2]uuid.UUID, rounds)
	for i := range rounds {
		orgs[i] = newOrg(t, db)
		pairs[i] = [2]uuid.UUID{newMember(t, db, orgs[i], "owner"), newMember(t, db, orgs[i], "owner")}
	}
	var wg sync.WaitGroup
	errs := make([][2]error, rounds)
	for i := range rounds {
		for j := range 2 {
			wg.Go(func() {
				_, errs[i][j] = storage.SetOrganizationMemberRole(ctx, db, orgs[i], pairs[i][1-j], "admin")
			})
		}
	}
	wg.Wait()
	for i := range rounds {
		won := 0
		for _, err := range errs[i] {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, storage.ErrLastOwner):
				t.Fatalf("round %d: %v", i, err)
			}
		}
		var owners int
		if err := db.Get(&owners, `SELECT count(*) FROM user_organizations WHERE organization_id = $1
			AND role = 'owner' AND deleted_at IS NULL`, orgs[i]); err != nil {
			t.Fatal(err)
		}
		if won != 1 || owners != 1 {
			t.Errorf("round %d: %d demotions won and %d owners left, want 1 and 1", i, won, owners)
		}
	}
}

func newOrg(t *testing.T, db *sqlx.DB) uuid.UUID {
	t.Helper()
	o, err := storage.CreateOrganization(context.Background(), db, "Org", "org-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// newMember creates a user who is a member of org with role.
func newMember(t *testing.T, db *sqlx.DB, org uuid.UUID, role string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	db.MustExec(`INSERT INTO users (id, email) VALUES ($1, $2)`, id, id.String()+"@example.com")
	db.MustExec(`INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, $3)`, id, org, role)
	return id
}

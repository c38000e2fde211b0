package storage_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/migrations"
	"till/storage"
	"till/storage/storagetest"
)

// ownerBackfill is the Up section of the migration that gives the customers made before
// owners existed an owner member; it can run again, as it does here over rows written the
// way those customers were.
func ownerBackfill(t *testing.T) string {
	t.Helper()
	b, err := migrations.FS.ReadFile("00060_owner_members.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(b), "-- +goose Down")
	return up
}

func TestOwnerBackfillGivesEveryLiveCustomerWithAnEmailOneOwner(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := t.Context()
	org, err := storage.CreateOrganization(ctx, db, "Backfill", "backfill")
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	customer := func(typ, email, name, externalID string, deleted bool) uuid.UUID {
		var id uuid.UUID
		if err := db.GetContext(ctx, &id, `INSERT INTO customers (organization_id, type, email, name, external_id, created_at, deleted_at)
			VALUES ($1, $2, nullif($3, ''), nullif($4, ''), nullif($5, ''), $6, CASE WHEN $7 THEN now() END) RETURNING id`,
			org.ID, typ, email, name, externalID, created, deleted); err != nil {
			t.Fatal(err)
		}
		return id
	}
	member := func(c uuid.UUID, email, role, externalID string) uuid.UUID {
		var id uuid.UUID
		if err := db.GetContext(ctx, &id, `INSERT INTO members (organization_id, customer_id, email, role, external_id)
			VALUES ($1, $2, $3, $4, nullif($5, '')) RETURNING id`, org.ID, c, email, role, externalID); err != nil {
			t.Fatal(err)
		}
		return id
	}
	plain := customer("individual", "ada@example.com", "Ada", "ada-1", false)
	seated := customer("individual", "bob@example.com", "", "", false)
	bob := member(seated, "BOB@example.com", "member", "")
	clash := customer("individual", "cy@example.com", "", "cy-1", false)
	member(clash, "seat@example.com", "member", "cy-1")
	owned := customer("individual", "dee@example.com", "", "", false)
	dee := member(owned, "someone@example.com", "owner", "")
	anonymousTeam := customer("team", "", "Team", "", false)
	gone := customer("individual", "eve@example.com", "", "", true)

	for range 2 { // the second run changes nothing
		if _, err := db.ExecContext(ctx, ownerBackfill(t)); err != nil {
			t.Fatal(err)
		}
	}

	type owner struct {
		Email      string    `db:"email"`
		Name       *string   `db:"name"`
		ExternalID *string   `db:"external_id"`
		CreatedAt  time.Time `db:"created_at"`
	}
	ownerOf := func(t *testing.T, c uuid.UUID) []owner {
		out := []owner{}
		if err := db.SelectContext(ctx, &out, `SELECT email, name, external_id, created_at FROM members
			WHERE customer_id = $1 AND role = 'owner' AND deleted_at IS NULL`, c); err != nil {
			t.Fatal(err)
		}
		return out
	}
	idOfOwner := func(c uuid.UUID) (id uuid.UUID) {
		_ = db.GetContext(ctx, &id, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner'`, c)
		return id
	}
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name     string
		customer uuid.UUID
		want     []owner
		id       uuid.UUID // the owner's id when it must be a member that was there
	}{
		{"a customer gets an owner from its email, name and external id, as old as itself", plain,
			[]owner{{Email: "ada@example.com", Name: s("Ada"), ExternalID: s("ada-1"), CreatedAt: created}}, uuid.Nil},
		{"a member holding the customer's email becomes its owner", seated, nil, bob},
		{"the owner goes without an external id another member holds", clash,
			[]owner{{Email: "cy@example.com", CreatedAt: created}}, uuid.Nil},
		{"a customer with an owner keeps it", owned, nil, dee},
		{"a team without an email gets none", anonymousTeam, []owner{}, uuid.Nil},
		{"a deleted customer gets none", gone, []owner{}, uuid.Nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.id != uuid.Nil {
				if got := idOfOwner(tc.customer); got != tc.id {
					t.Errorf("owner = %s, want %s", got, tc.id)
				}
				return
			}
			got := ownerOf(t, tc.customer)
			for i := range got {
				got[i].CreatedAt = got[i].CreatedAt.UTC()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("owners (-want +got):\n%s", diff)
			}
		})
	}
}

package storage_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
)

// TestChangesToSessionsNotifyTheSessionCaches runs each change, then a marker: whatever the
// listener receives before the marker is what the change notified. Every change that could
// alter a session's or a token's lookup must notify its channel; the hot writes that cannot
// must not, or every order would empty every process's caches.
func TestChangesToSessionsNotifyTheSessionCaches(t *testing.T) {
	probe := newNotifyProbe(t, storage.SessionsChannel, storage.CredentialsChannel)
	db := probe.db
	ctx := t.Context()
	org, err := storage.CreateOrganization(ctx, db, "Sessions", "sessions")
	if err != nil {
		t.Fatal(err)
	}
	email := "buyer@example.com"
	c, err := storage.CreateCustomer(ctx, db, org.ID, storage.CustomerWrite{Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	m, err := storage.EnsureOwnerMember(ctx, db, c)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(query string, args ...any) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := db.Exec(query, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	in := time.Now().Add(time.Hour)
	sessions, credentials := []string{storage.SessionsChannel}, []string{storage.CredentialsChannel}
	tests := []struct {
		name   string
		change func(t *testing.T)
		want   []string
	}{
		{"a new session notifies nobody", func(t *testing.T) {
			if _, err := storage.CreateCustomerSession(ctx, db, org.ID, c.ID, "h1", in, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := storage.CreateMemberSession(ctx, db, org.ID, c.ID, m.ID, "h2", in, nil); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"a customer session changed", exec(`UPDATE customer_sessions SET expires_at = now() WHERE token = 'h1'`), sessions},
		{"a customer session deleted", exec(`DELETE FROM customer_sessions WHERE token = 'h1'`), sessions},
		{"a member session changed", exec(`UPDATE member_sessions SET expires_at = now() WHERE token = 'h2'`), sessions},
		{"a member's role changed", exec(`UPDATE members SET role = 'member' WHERE id = $1`, m.ID), sessions},
		{"a customer changed", func(t *testing.T) {
			renamed := "Renamed"
			if _, err := storage.UpdateCustomer(ctx, db, []uuid.UUID{org.ID}, c.ID, storage.CustomerUpdate{Name: storage.Set(&renamed)}); err != nil {
				t.Fatal(err)
			}
		}, sessions},
		{"a customer deleted", func(t *testing.T) {
			if _, err := storage.DeleteCustomer(ctx, db, []uuid.UUID{org.ID}, c.ID); err != nil {
				t.Fatal(err)
			}
		}, sessions},
		{"a statement changing no row still notifies", exec(`UPDATE members SET role = 'owner' WHERE false`), sessions},
		{"an order number drawn notifies nobody", exec(`INSERT INTO order_numbers (organization_id, invoice_last) VALUES ($1, 1)
			ON CONFLICT (organization_id) DO UPDATE SET invoice_last = order_numbers.invoice_last + 1`, org.ID), nil},
		{"an organization token revoked", exec(`UPDATE organization_access_tokens SET deleted_at = now() WHERE organization_id = $1`, org.ID), credentials},
		{"a personal token deleted", exec(`DELETE FROM personal_access_tokens WHERE false`), credentials},
		{"a personal token revoked", exec(`UPDATE personal_access_tokens SET deleted_at = now() WHERE false`), credentials},
		{"a personal token's use recorded notifies nobody", func(t *testing.T) {
			if err := storage.TouchPersonalToken(ctx, db, uuid.New()); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"a user joins an organization", exec(`INSERT INTO user_organizations (user_id, organization_id)
			SELECT id, $1 FROM users WHERE false`, org.ID), []string{storage.CredentialsChannel, storage.SessionsChannel}},
		{"a member's role changed", exec(`UPDATE user_organizations SET role = 'member' WHERE false`),
			[]string{storage.CredentialsChannel, storage.SessionsChannel}},
		{"an organization deleted", exec(`UPDATE organizations SET deleted_at = now() WHERE id = $1`, org.ID),
			[]string{storage.SessionsChannel, storage.CredentialsChannel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := probe.notifiedBy(t, tt.change); !cmp.Equal(got, tt.want) {
				t.Errorf("notified %v, want %v", got, tt.want)
			}
		})
	}
}

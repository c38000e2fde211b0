package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// newOAuth2Client stores a confidential client of owner with a unique client id.
func newOAuth2Client(tb testing.TB, db *sqlx.DB, owner storage.OAuth2ClientOwner, name string) *storage.OAuth2Client {
	tb.Helper()
	hash := fmtHash(name)
	c, err := storage.CreateOAuth2Client(context.Background(), db, owner, storage.OAuth2ClientWrite{
		ClientID: "till_ci_" + uuid.NewString(), SecretHash: &hash, ClientName: name,
		RedirectURIs: []string{"https://app.example/cb"}, Scope: "openid email",
		TokenEndpointAuthMethod: "client_secret_post", GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, DefaultSubType: "user",
	})
	if err != nil {
		tb.Fatalf("creating client: %v", err)
	}
	return c
}

// fmtHash is a 64-character stand-in for an HMAC hash, distinct per seed.
func fmtHash(seed string) string {
	h := []byte(seed + "0000000000000000000000000000000000000000000000000000000000000000")
	return string(h[:64])
}

func TestOAuth2ClientOwnership(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storagetest.New(t)
	org, err := storage.CreateOrganization(ctx, db, "Apps", "apps-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	var userID, otherUserID uuid.UUID
	for _, id := range []*uuid.UUID{&userID, &otherUserID} {
		if err := db.GetContext(ctx, id, `INSERT INTO users (email) VALUES ($1) RETURNING id`,
			uuid.NewString()[:8]+"@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	user := storage.OAuth2ClientOwner{UserID: &userID}
	otherUser := storage.OAuth2ClientOwner{UserID: &otherUserID}
	orgOwner := storage.OAuth2ClientOwner{OrganizationID: &org.ID}

	older := newOAuth2Client(t, db, user, "older")
	newer := newOAuth2Client(t, db, user, "newer")
	orgClient := newOAuth2Client(t, db, orgOwner, "org")
	db.MustExec(`UPDATE oauth2_clients SET created_at = now() - interval '1 hour' WHERE id = $1`, older.ID)
	if newer.UserID == nil || *newer.UserID != userID || newer.OrganizationID != nil || newer.ModifiedAt != nil {
		t.Errorf("new client = %+v, want owned by the user, never modified", newer)
	}

	list := func(owner storage.OAuth2ClientOwner) []string {
		t.Helper()
		p, err := storage.ListOAuth2Clients(ctx, db, owner, storage.Window{Page: 1, Limit: 10})
		items, total := p.Items, p.Total
		if err != nil {
			t.Fatal(err)
		}
		if total != len(items) {
			t.Errorf("total = %d, items = %d", total, len(items))
		}
		names := []string{}
		for _, c := range items {
			names = append(names, c.ClientName)
		}
		return names
	}
	for _, tc := range []struct {
		name  string
		owner storage.OAuth2ClientOwner
		want  []string
	}{
		{"a user lists its own clients newest first", user, []string{"newer", "older"}},
		{"an organization lists its own clients", orgOwner, []string{"org"}},
		{"another user lists none", otherUser, []string{}},
		{"a zero owner lists none", storage.OAuth2ClientOwner{}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, list(tc.owner)); diff != "" {
				t.Errorf("list (-want +got):\n%s", diff)
			}
		})
	}

	if _, err := storage.GetOAuth2Client(ctx, db, otherUser, newer.ClientID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user's get: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.GetOAuth2Client(ctx, db, orgOwner, newer.ClientID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("an organization's get of a user client: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.UpdateOAuth2Client(ctx, db, otherUser, newer.ClientID, storage.OAuth2ClientUpdate{ClientName: storage.Set("x")}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user's update: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.DeleteOAuth2Client(ctx, db, otherUser, newer.ClientID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user's delete: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.RotateOAuth2ClientSecret(ctx, db, otherUser, newer.ClientID, fmtHash("x")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user's rotation: err = %v, want ErrNotFound", err)
	}
	got, err := storage.GetOAuth2ClientByClientID(ctx, db, orgClient.ClientID)
	if err != nil || got.ID != orgClient.ID {
		t.Errorf("by client id = %+v, %v; want the organization's client, whoever asks", got, err)
	}

	updated, err := storage.UpdateOAuth2Client(ctx, db, user, newer.ClientID, storage.OAuth2ClientUpdate{
		RedirectURIs: storage.Set([]string{"https://a.example/1", "http://127.0.0.1:8080/cb"}),
		GrantTypes:   storage.Set([]string{"authorization_code"}),
		ClientURI:    storage.Set[*string](nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://a.example/1", "http://127.0.0.1:8080/cb"}, []string(updated.RedirectURIs)); diff != "" ||
		len(updated.GrantTypes) != 1 || updated.ModifiedAt == nil {
		t.Errorf("updated = %+v (redirect diff %s)", updated, diff)
	}
	rotated, err := storage.RotateOAuth2ClientSecret(ctx, db, user, newer.ClientID, fmtHash("rotated"))
	if err != nil || rotated.ClientSecretHash == nil || *rotated.ClientSecretHash != fmtHash("rotated") {
		t.Errorf("rotated = %+v, %v", rotated, err)
	}
}

func TestDeleteOAuth2ClientEndsEverythingIssuedToIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storagetest.New(t)
	var userID uuid.UUID
	if err := db.GetContext(ctx, &userID, `INSERT INTO users (email) VALUES ('del@example.com') RETURNING id`); err != nil {
		t.Fatal(err)
	}
	owner := storage.OAuth2ClientOwner{UserID: &userID}
	doomed := newOAuth2Client(t, db, owner, "doomed")
	kept := newOAuth2Client(t, db, owner, "kept")
	for i, c := range []*storage.OAuth2Client{doomed, kept} {
		db.MustExec(`INSERT INTO oauth2_authorization_codes (code, client_id, sub_type, user_id, redirect_uri, scope, expires_at)
			VALUES ($1, $2, 'user', $3, 'https://app.example/cb', 'openid', now() + interval '5 minutes')`,
			fmtHash("code"+string(rune('a'+i))), c.ClientID, userID)
		db.MustExec(`INSERT INTO oauth2_grants (client_id, scope, user_id) VALUES ($1, 'openid', $2)`, c.ClientID, userID)
		db.MustExec(`INSERT INTO oauth2_tokens (client_id, access_token, refresh_token, scope, sub_type, user_id, expires_at)
			VALUES ($1, $2, $3, 'openid', 'user', $4, now() + interval '1 hour')`,
			c.ClientID, fmtHash("at"+string(rune('a'+i))), fmtHash("rt"+string(rune('a'+i))), userID)
	}

	deleted, err := storage.DeleteOAuth2Client(ctx, db, owner, doomed.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if deleted.ID != doomed.ID || deleted.DeletedAt == nil {
		t.Errorf("deleted = %+v, want the client with deleted_at set", deleted)
	}
	if _, err := storage.GetOAuth2ClientByClientID(ctx, db, doomed.ClientID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleted client by client id: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.DeleteOAuth2Client(ctx, db, owner, doomed.ClientID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second delete: err = %v, want ErrNotFound", err)
	}

	type counts struct {
		Live   int `db:"live"`
		Codes  int `db:"codes"`
		Grants int `db:"grants"`
	}
	count := func(clientID string) counts {
		t.Helper()
		var c counts
		if err := db.GetContext(ctx, &c, `SELECT
			(SELECT count(*) FROM oauth2_tokens WHERE client_id = $1
				AND access_token_revoked_at IS NULL AND refresh_token_revoked_at IS NULL) AS live,
			(SELECT count(*) FROM oauth2_authorization_codes WHERE client_id = $1) AS codes,
			(SELECT count(*) FROM oauth2_grants WHERE client_id = $1) AS grants`, clientID); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := count(doomed.ClientID); got != (counts{}) {
		t.Errorf("left for the deleted client = %+v, want no live token, code or consent", got)
	}
	if got := count(kept.ClientID); got != (counts{Live: 1, Codes: 1, Grants: 1}) {
		t.Errorf("left for the other client = %+v, want everything untouched", got)
	}
}

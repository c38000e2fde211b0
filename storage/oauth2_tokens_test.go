package storage_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// oauth2Fixture is a user in two organizations with one client.
type oauth2Fixture struct {
	db         *sqlx.DB
	user       uuid.UUID
	orgA, orgB uuid.UUID
	client     string
}

func newOAuth2Fixture(t *testing.T) oauth2Fixture {
	t.Helper()
	ctx := context.Background()
	db := storagetest.New(t)
	f := oauth2Fixture{db: db, user: uuid.New(), client: "till_ci_" + uuid.NewString()}
	db.MustExec(`INSERT INTO users (id, email) VALUES ($1, $2)`, f.user, f.user.String()+"@example.com")
	for _, id := range []*uuid.UUID{&f.orgA, &f.orgB} {
		o, err := storage.CreateOrganization(ctx, db, "Org", "org-"+uuid.NewString()[:8])
		if err != nil {
			t.Fatal(err)
		}
		*id = o.ID
		db.MustExec(`INSERT INTO user_organizations (user_id, organization_id) VALUES ($1, $2)`, f.user, o.ID)
	}
	hash := "h"
	_, err := storage.CreateOAuth2Client(ctx, db, storage.OAuth2ClientOwner{UserID: &f.user}, storage.OAuth2ClientWrite{
		ClientID: f.client, SecretHash: &hash, ClientName: "App", RedirectURIs: []string{"https://app.example/cb"},
		Scope: "openid email", TokenEndpointAuthMethod: "client_secret_post",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, DefaultSubType: "user"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f oauth2Fixture) code(t *testing.T, hash string) *storage.OAuth2AuthorizationCode {
	t.Helper()
	c, err := storage.CreateOAuth2AuthorizationCode(context.Background(), f.db, storage.OAuth2AuthorizationCode{
		Code: hash, ClientID: f.client, SubType: "user", UserID: &f.user, RedirectURI: "https://app.example/cb",
		Scope: "openid"}, 300*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f oauth2Fixture) token(t *testing.T, access string, codeID *uuid.UUID, orgs ...string) *storage.OAuth2Token {
	t.Helper()
	refresh := "r" + access
	tok, err := storage.CreateOAuth2Token(context.Background(), f.db, storage.OAuth2TokenWrite{ClientID: f.client,
		AccessToken: access, RefreshToken: &refresh, Scope: "openid", SubType: "user", UserID: &f.user,
		OrganizationIDs: orgs, ExpiresIn: time.Hour, AuthorizationCodeID: codeID})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAuthorizationCodeIsUsedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newOAuth2Fixture(t)
	c := f.code(t, "code-1")

	if _, err := storage.UseOAuth2AuthorizationCode(ctx, f.db, "code-1", "till_ci_other"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another client's use: err = %v, want ErrNotFound", err)
	}
	got, err := storage.UseOAuth2AuthorizationCode(ctx, f.db, "code-1", f.client)
	if err != nil || got.ID != c.ID || got.UsedAt == nil {
		t.Fatalf("first use = %+v, %v; want the code, marked used", got, err)
	}
	again, err := storage.UseOAuth2AuthorizationCode(ctx, f.db, "code-1", f.client)
	if !errors.Is(err, storage.ErrCodeUsed) || again == nil || again.ID != c.ID {
		t.Fatalf("second use = %+v, %v; want the code with ErrCodeUsed", again, err)
	}

	f.code(t, "code-2")
	f.db.MustExec(`UPDATE oauth2_authorization_codes SET expires_at = now() - interval '1 second' WHERE code = 'code-2'`)
	if _, err := storage.UseOAuth2AuthorizationCode(ctx, f.db, "code-2", f.client); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("expired code: err = %v, want ErrNotFound", err)
	}
}

func TestPurgeKeepsCodesUntilTheirReplayWindowEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newOAuth2Fixture(t)
	used := f.code(t, "used")
	if _, err := storage.UseOAuth2AuthorizationCode(ctx, f.db, "used", f.client); err != nil {
		t.Fatal(err)
	}
	tok := f.token(t, "issued-from-used", &used.ID)
	f.code(t, "fresh")
	f.db.MustExec(`UPDATE oauth2_authorization_codes SET expires_at = now() - interval '2 days' WHERE code = 'used'`)

	n, err := storage.PurgeOAuth2AuthorizationCodes(ctx, f.db, time.Now().Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("purge = %d, %v; want the one code expired two days ago", n, err)
	}
	var left []string
	f.db.Select(&left, `SELECT rtrim(code) FROM oauth2_authorization_codes WHERE client_id = $1`, f.client)
	if diff := cmp.Diff([]string{"fresh"}, left); diff != "" {
		t.Errorf("codes left (-want +got):\n%s", diff)
	}
	if _, err := storage.ResolveOAuth2AccessToken(ctx, f.db, "issued-from-used"); err != nil {
		t.Errorf("the purged code's token %s stopped working: %v", tok.ID, err)
	}
}

func TestConcurrentCodeUsesHaveOneWinner(t *testing.T) {
	t.Parallel()
	f := newOAuth2Fixture(t)
	f.code(t, "raced")
	const n = 16
	var wg sync.WaitGroup
	results := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := storage.UseOAuth2AuthorizationCode(context.Background(), f.db, "raced", f.client)
			results <- err
		})
	}
	wg.Wait()
	close(results)
	wins, replays := 0, 0
	for err := range results {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, storage.ErrCodeUsed):
			replays++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 || replays != n-1 {
		t.Errorf("wins = %d, replays = %d; want 1 and %d", wins, replays, n-1)
	}
}

func TestOAuth2TokenLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newOAuth2Fixture(t)
	c := f.code(t, "code")
	tok := f.token(t, "access", &c.ID, f.orgB.String())

	resolved, err := storage.ResolveOAuth2AccessToken(ctx, f.db, "access")
	if err != nil {
		t.Fatal(err)
	}
	if resolved.UserID != f.user || resolved.SubType != "user" || !cmp.Equal(resolved.Organizations, []uuid.UUID{f.orgB}) {
		t.Errorf("resolved = %+v, want the user down-scoped to %s", resolved, f.orgB)
	}

	for _, tt := range []struct {
		name string
		hint storage.TokenHint
		hash string
		ok   bool
	}{
		{"the access token without a hint", storage.TokenHintNone, "access", true},
		{"the refresh token without a hint", storage.TokenHintNone, "raccess", true},
		{"the access token with its hint", storage.TokenHintAccess, "access", true},
		{"the refresh token under the access hint", storage.TokenHintAccess, "raccess", false},
		{"the refresh token with its hint", storage.TokenHintRefresh, "raccess", true},
	} {
		t.Run("finds "+tt.name, func(t *testing.T) {
			got, err := storage.FindOAuth2Token(ctx, f.db, tt.hash, tt.hint)
			if tt.ok && (err != nil || got.ID != tok.ID) {
				t.Errorf("got %v, %v; want the token", got, err)
			}
			if !tt.ok && !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("err = %v, want ErrNotFound", err)
			}
		})
	}

	if _, err := storage.UseOAuth2RefreshToken(ctx, f.db, "raccess", "till_ci_other"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("foreign refresh: err = %v, want ErrNotFound", err)
	}
	old, err := storage.UseOAuth2RefreshToken(ctx, f.db, "raccess", f.client)
	if err != nil || old.RefreshTokenRevokedAt == nil {
		t.Fatalf("refresh = %+v, %v; want the revoked old pair", old, err)
	}
	if _, err := storage.UseOAuth2RefreshToken(ctx, f.db, "raccess", f.client); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second refresh: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.ResolveOAuth2AccessToken(ctx, f.db, "access"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("access token after its refresh: err = %v, want ErrNotFound", err)
	}

	second := f.token(t, "access-2", &c.ID)
	if n, err := storage.RevokeOAuth2TokensOfCode(ctx, f.db, c.ID); err != nil || n != 2 {
		t.Errorf("revoking the code's tokens: %d, %v; want 2", n, err)
	}
	if _, err := storage.ResolveOAuth2AccessToken(ctx, f.db, "access-2"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("token of a replayed code still resolves (%v), id %s", err, second.ID)
	}
}

func TestRevokeOAuth2TokenByHint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newOAuth2Fixture(t)
	for _, accessOnly := range []bool{true, false} {
		tok := f.token(t, uuid.NewString(), nil)
		if err := storage.RevokeOAuth2Token(ctx, f.db, tok.ID, accessOnly); err != nil {
			t.Fatal(err)
		}
		got, err := storage.FindOAuth2Token(ctx, f.db, tok.AccessToken, storage.TokenHintAccess)
		if err != nil {
			t.Fatal(err)
		}
		if got.AccessTokenRevokedAt == nil || (got.RefreshTokenRevokedAt == nil) != accessOnly || !got.Revoked() {
			t.Errorf("accessOnly=%v: revoked at %v / %v", accessOnly, got.AccessTokenRevokedAt, got.RefreshTokenRevokedAt)
		}
	}
}

package resolvers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
	"till/storage"
)

const oauth2ClientFields = `clientId clientName clientUri logoUri tosUri policyUri redirectUris scope scopes
	tokenEndpointAuthMethod grantTypes responseTypes defaultSubType createdAt modifiedAt`

type oauth2Client struct {
	ClientID                string   `json:"clientId"`
	ClientName              string   `json:"clientName"`
	ClientURI               *string  `json:"clientUri"`
	LogoURI                 *string  `json:"logoUri"`
	TosURI                  *string  `json:"tosUri"`
	PolicyURI               *string  `json:"policyUri"`
	RedirectURIs            []string `json:"redirectUris"`
	Scope                   string   `json:"scope"`
	Scopes                  []string `json:"scopes"`
	TokenEndpointAuthMethod string   `json:"tokenEndpointAuthMethod"`
	GrantTypes              []string `json:"grantTypes"`
	ResponseTypes           []string `json:"responseTypes"`
	DefaultSubType          string   `json:"defaultSubType"`
	CreatedAt               string   `json:"createdAt"`
	ModifiedAt              *string  `json:"modifiedAt"`
}

type oauth2ClientSecret struct {
	Client       oauth2Client `json:"client"`
	ClientSecret *string      `json:"clientSecret"`
}

const (
	createOAuth2ClientDoc = `mutation($input: OAuth2ClientCreateInput!) { createOAuth2Client(input: $input) {
		client { ` + oauth2ClientFields + ` } clientSecret } }`
	updateOAuth2ClientDoc = `mutation($clientId: String!, $input: OAuth2ClientUpdateInput!) {
		updateOAuth2Client(clientId: $clientId, input: $input) { client { ` + oauth2ClientFields + ` } clientSecret } }`
	rotateOAuth2ClientDoc = `mutation($clientId: String!) { rotateOAuth2ClientSecret(clientId: $clientId) {
		client { ` + oauth2ClientFields + ` } clientSecret } }`
	deleteOAuth2ClientDoc = `mutation($clientId: String!) { deleteOAuth2Client(clientId: $clientId) { ` + oauth2ClientFields + ` } }`
	getOAuth2ClientDoc    = `query($clientId: String!) { oauth2Client(clientId: $clientId) { ` + oauth2ClientFields + ` } }`
	listOAuth2ClientsDoc  = `query($page: Int, $limit: Int) { oauth2Clients(page: $page, limit: $limit) {
		items { ` + oauth2ClientFields + ` } pagination { totalCount maxPage } } }`
)

// oauth2ClientInput is a valid create input; tests override fields of a copy.
func oauth2ClientInput(overrides vars) vars {
	in := vars{"clientName": "My App", "redirectUris": []any{"https://app.example/callback"}, "scope": "openid email"}
	for k, v := range overrides {
		in[k] = v
	}
	return in
}

func createOAuth2Client(tb testing.TB, s *resolverstest.Server, token string, input vars) oauth2ClientSecret {
	tb.Helper()
	var out struct{ CreateOAuth2Client oauth2ClientSecret }
	s.Query(tb, token, createOAuth2ClientDoc, vars{"input": input}, &out)
	return out.CreateOAuth2Client
}

// storedClient reads a client as the OAuth2 endpoints will, by its client id.
func storedClient(tb testing.TB, s *resolverstest.Server, clientID string) *storage.OAuth2Client {
	tb.Helper()
	c, err := storage.GetOAuth2ClientByClientID(context.Background(), s.DB, clientID)
	if err != nil {
		tb.Fatalf("reading client %s: %v", clientID, err)
	}
	return c
}

func TestOAuth2ClientLifecycle(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "organizations:write")
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:write", Orgs: []uuid.UUID{org.ID}}).Token

	created := createOAuth2Client(t, s, user, oauth2ClientInput(vars{"clientUri": "https://app.example/",
		"scope": "email openid email", "redirectUris": []any{"https://app.example/callback", "http://127.0.0.1:4711/cb"}}))
	c := created.Client
	want := oauth2Client{ClientID: c.ClientID, ClientName: "My App", ClientURI: ptr("https://app.example/"),
		RedirectURIs: []string{"https://app.example/callback", "http://127.0.0.1:4711/cb"}, Scope: "openid email",
		Scopes: []string{"openid", "email"}, TokenEndpointAuthMethod: "client_secret_post",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		DefaultSubType: "user", CreatedAt: c.CreatedAt}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("created client (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(c.ClientID, auth.PrefixClientID) || !auth.ChecksumValid(c.ClientID) {
		t.Errorf("client id = %q, want a till_ci_ credential", c.ClientID)
	}
	if created.ClientSecret == nil || !strings.HasPrefix(*created.ClientSecret, auth.PrefixClientSecret) ||
		!auth.ChecksumValid(*created.ClientSecret) {
		t.Fatalf("client secret = %v, want a till_cs_ credential", created.ClientSecret)
	}
	secret := *created.ClientSecret

	t.Run("the secret is stored only as its hash", func(t *testing.T) {
		var plain int
		s.Get(t, &plain, `SELECT count(*) FROM oauth2_clients c WHERE strpos(c::text, $1) > 0`, secret)
		stored := storedClient(t, s, c.ClientID)
		if plain != 0 || stored.ClientSecretHash == nil || *stored.ClientSecretHash != auth.Hash(s.Secret, secret) {
			t.Errorf("row holds the plaintext %d times, hash %v; want only auth.Hash of the secret", plain, stored.ClientSecretHash)
		}
	})
	t.Run("reads never show the secret again", func(t *testing.T) {
		var got struct{ OAuth2Client oauth2Client }
		s.Query(t, user, getOAuth2ClientDoc, vars{"clientId": c.ClientID}, &got)
		if diff := cmp.Diff(c, got.OAuth2Client); diff != "" {
			t.Errorf("read (-created +read):\n%s", diff)
		}
	})
	t.Run("the secret verifies, and nothing else does", func(t *testing.T) {
		stored := storedClient(t, s, c.ClientID)
		for _, tc := range []struct {
			secret string
			want   bool
		}{{secret, true}, {"", false}, {secret + "x", false}, {auth.Generate(auth.PrefixClientSecret), false}} {
			if got := s.Resolver.VerifyClientSecret(stored, tc.secret); got != tc.want {
				t.Errorf("verify(%q) = %v, want %v", tc.secret, got, tc.want)
			}
		}
		s.Exec(t, `UPDATE oauth2_clients SET client_secret_expires_at = now() - interval '1 second' WHERE client_id = $1`, c.ClientID)
		if s.Resolver.VerifyClientSecret(storedClient(t, s, c.ClientID), secret) {
			t.Error("an expired secret verified")
		}
		s.Exec(t, `UPDATE oauth2_clients SET client_secret_expires_at = NULL WHERE client_id = $1`, c.ClientID)
	})

	var updated struct{ UpdateOAuth2Client oauth2ClientSecret }
	s.Query(t, user, updateOAuth2ClientDoc, vars{"clientId": c.ClientID, "input": vars{"clientName": " Renamed ",
		"clientUri": nil, "logoUri": "https://cdn.example/logo.png", "redirectUris": []any{"https://new.example/cb"},
		"scope": "openid", "tokenEndpointAuthMethod": "client_secret_basic", "grantTypes": []any{"authorization_code"},
		"defaultSubType": "organization"}}, &updated)
	u := updated.UpdateOAuth2Client
	if u.ClientSecret != nil || u.Client.ClientName != "Renamed" || u.Client.ClientURI != nil ||
		u.Client.LogoURI == nil || u.Client.Scope != "openid" || u.Client.TokenEndpointAuthMethod != "client_secret_basic" ||
		strings.Join(u.Client.GrantTypes, ",") != "authorization_code" || u.Client.DefaultSubType != "organization" ||
		strings.Join(u.Client.RedirectURIs, ",") != "https://new.example/cb" || u.Client.ModifiedAt == nil {
		t.Errorf("updated = %+v", u)
	}
	if !s.Resolver.VerifyClientSecret(storedClient(t, s, c.ClientID), secret) {
		t.Error("an update that kept the client confidential changed its secret")
	}

	var rotated struct{ RotateOAuth2ClientSecret oauth2ClientSecret }
	s.Query(t, user, rotateOAuth2ClientDoc, vars{"clientId": c.ClientID}, &rotated)
	newSecret := rotated.RotateOAuth2ClientSecret.ClientSecret
	if newSecret == nil || *newSecret == secret || !auth.ChecksumValid(*newSecret) {
		t.Fatalf("rotated secret = %v, want a fresh till_cs_ credential", newSecret)
	}
	stored := storedClient(t, s, c.ClientID)
	if s.Resolver.VerifyClientSecret(stored, secret) || !s.Resolver.VerifyClientSecret(stored, *newSecret) {
		t.Error("after rotation the old secret must fail and the new one verify")
	}

	var list struct {
		OAuth2Clients struct {
			Items      []oauth2Client
			Pagination struct{ TotalCount, MaxPage int }
		}
	}
	s.Query(t, user, listOAuth2ClientsDoc, nil, &list)
	if len(list.OAuth2Clients.Items) != 1 || list.OAuth2Clients.Pagination.TotalCount != 1 {
		t.Errorf("list = %+v, want the one client", list.OAuth2Clients)
	}

	var deleted struct{ DeleteOAuth2Client oauth2Client }
	s.Query(t, user, deleteOAuth2ClientDoc, vars{"clientId": c.ClientID}, &deleted)
	if deleted.DeleteOAuth2Client.ClientID != c.ClientID {
		t.Errorf("deleted = %+v", deleted.DeleteOAuth2Client)
	}
	for _, doc := range []string{getOAuth2ClientDoc, deleteOAuth2ClientDoc, rotateOAuth2ClientDoc} {
		wantError(t, s.QueryError(t, user, doc, vars{"clientId": c.ClientID}), "NOT_FOUND", "ResourceNotFound")
	}
	s.Query(t, user, listOAuth2ClientsDoc, nil, &list)
	if len(list.OAuth2Clients.Items) != 0 {
		t.Errorf("list after delete = %+v, want empty", list.OAuth2Clients.Items)
	}
	if _, err := storage.GetOAuth2ClientByClientID(context.Background(), s.DB, c.ClientID); err == nil {
		t.Error("the OAuth2 endpoints still find a deleted client")
	}
}

package storage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/storage"
)

func TestARememberedConsentIsAlwaysOneTheUserGaveInEveryPart(t *testing.T) {
	t.Parallel()
	type consent struct {
		scope string
		orgs  []string // "a", "b"
	}
	for _, tt := range []struct {
		name      string
		consents  []consent
		wantScope string
		wantOrgs  string
	}{
		{"a consent over the same organizations adds its scopes", []consent{{"openid", nil}, {"email openid", nil}},
			"email openid", ""},
		{"a consent narrowed to the same organization adds its scopes", []consent{{"openid", []string{"a"}}, {"email", []string{"a"}}},
			"email openid", "a"},
		{"a consent narrowed otherwise replaces the remembered one", []consent{{"email openid", nil}, {"openid", []string{"a"}}},
			"openid", "a"},
		{"a consent to all organizations replaces a narrowed one", []consent{{"email", []string{"b"}}, {"openid", nil}},
			"openid", ""},
		{"an organization listed twice is remembered once", []consent{{"openid", []string{"a", "a"}}}, "openid", "a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newOAuth2Fixture(t)
			name := map[string]uuid.UUID{"a": f.orgA, "b": f.orgB}
			for _, c := range tt.consents {
				var orgs []uuid.UUID
				for _, o := range c.orgs {
					orgs = append(orgs, name[o])
				}
				g := storage.OAuth2GrantWrite{ClientID: f.client, Scope: c.scope, UserID: &f.user, OrganizationIDs: orgs}
				if err := storage.UpsertOAuth2Grant(ctx, f.db, g); err != nil {
					t.Fatal(err)
				}
			}
			got, err := storage.GetOAuth2UserGrant(ctx, f.db, f.client, f.user)
			if err != nil || got == nil {
				t.Fatalf("grant = %v, %v", got, err)
			}
			var orgs []string
			for _, id := range got.OrganizationIDs {
				for n, o := range name {
					if o.String() == id {
						orgs = append(orgs, n)
					}
				}
			}
			if got.Scope != tt.wantScope || strings.Join(orgs, " ") != tt.wantOrgs {
				t.Errorf("remembered %q over %v, want %q over %q", got.Scope, orgs, tt.wantScope, tt.wantOrgs)
			}
		})
	}
}

func TestOrganizationConsentsAreListedForTheUsersMembershipsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newOAuth2Fixture(t)
	other, err := storage.CreateOrganization(ctx, f.db, "Other", "other-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	for _, org := range []uuid.UUID{f.orgA, other.ID} {
		if err := storage.UpsertOAuth2Grant(ctx, f.db, storage.OAuth2GrantWrite{ClientID: f.client, Scope: "openid",
			OrganizationID: &org}); err != nil {
			t.Fatal(err)
		}
	}
	owner := uuid.New() // organization A keeps an owner when the user becomes an admin
	f.db.MustExec(`INSERT INTO users (id, email) VALUES ($1, $2)`, owner, owner.String()+"@example.com")
	f.db.MustExec(`INSERT INTO user_organizations (user_id, organization_id) VALUES ($1, $2)`, owner, f.orgA)
	f.db.MustExec(`UPDATE user_organizations SET role = 'admin' WHERE organization_id = $1 AND user_id = $2`, f.orgA, f.user)
	got, err := storage.ListOAuth2OrganizationGrants(ctx, f.db, f.client, f.user)
	if err != nil || len(got) != 1 || got[0].OrganizationID != f.orgA || got[0].Role != "admin" || got[0].Scope != "openid" {
		t.Errorf("grants = %+v, %v; want organization A's alone, with the role admin", got, err)
	}
	f.db.MustExec(`UPDATE user_organizations SET deleted_at = now() WHERE organization_id = $1 AND user_id = $2`, f.orgA, f.user)
	if got, err := storage.ListOAuth2OrganizationGrants(ctx, f.db, f.client, f.user); err != nil || len(got) != 0 {
		t.Errorf("after leaving the organization: %+v, %v; want none", got, err)
	}
	if g, err := storage.GetOAuth2UserGrant(ctx, f.db, f.client, f.user); err != nil || g != nil {
		t.Errorf("the user never consented: %+v, %v", g, err)
	}
}

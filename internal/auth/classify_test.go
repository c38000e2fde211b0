package auth_test

import (
	"strings"
	"testing"

	"till/internal/auth"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		token string
		want  auth.TokenKind
	}{
		{"a client registration token is recognised", "till_crt_x", auth.TokenClientRegistration},
		{"a member session is recognised", "till_mst_x", auth.TokenMemberSession},
		{"a customer session is recognised", "till_cst_x", auth.TokenCustomerSession},
		{"an organization access token is recognised", "till_oat_x", auth.TokenOrganization},
		{"a user OAuth2 access token is recognised", "till_at_u_x", auth.TokenOAuthAccess},
		{"a legacy organization OAuth2 access token is recognised", "till_at_o_x", auth.TokenOAuthAccess},
		{"a personal access token is recognised", "till_pat_x", auth.TokenPersonal},
		{"an upstream polar_ token is invalid", "polar_oat_x", auth.TokenInvalid},
		{"a refresh token used as bearer is invalid", "till_rt_u_x", auth.TokenInvalid},
		{"an authorization code used as bearer is invalid", "till_ac_x", auth.TokenInvalid},
		{"a client secret used as bearer is invalid", "till_cs_x", auth.TokenInvalid},
		{"a webhook secret used as bearer is invalid", "whsec_x", auth.TokenInvalid},
		{"an unknown access-token subtype is invalid", "till_at_x_x", auth.TokenInvalid},
		{"an uppercase prefix is invalid", "TILL_OAT_x", auth.TokenInvalid},
		{"an empty token is invalid", "", auth.TokenInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := auth.Classify(tt.token); got != tt.want {
				t.Fatalf("Classify(%q) = %v, want %v", tt.token, got, tt.want)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		name      string
		header    string
		wantToken string
		wantOK    bool
	}{
		{"a bearer header yields its token", "Bearer till_oat_x", "till_oat_x", true},
		{"the scheme is case-insensitive", "bEaReR till_oat_x", "till_oat_x", true},
		{"a lowercase scheme is accepted", "bearer till_oat_x", "till_oat_x", true},
		{"extra spaces around the token are trimmed", "Bearer   till_oat_x  ", "till_oat_x", true},
		{"a Latin-1 no-break space around the token is trimmed like Python's strip", "Bearer \xa0till_oat_x", "till_oat_x", true},
		{"inner spaces stay part of the token", "Bearer a b", "a b", true},
		{"an empty header is no token", "", "", false},
		{"a scheme alone is no token", "Bearer", "", false},
		{"a scheme and blanks is no token", "Bearer    ", "", false},
		{"a tab after the scheme is not a separator", "Bearer\ttill_oat_x", "", false},
		{"the basic scheme is no token", "Basic dXNlcjpwYXNz", "", false},
		{"a token without scheme is no token", "till_oat_x", "", false},
		{"a leading space leaves an empty scheme and no token", " Bearer till_oat_x", "", false},
		{"a non-ASCII token is no token", "Bearer till_oat_é", "", false},
		{"a raw high byte in the token is no token", "Bearer till_oat_\xff", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token, ok := auth.BearerToken(tt.header)
			if token != tt.wantToken || ok != tt.wantOK {
				t.Fatalf("BearerToken(%q) = %q, %v; want %q, %v", tt.header, token, ok, tt.wantToken, tt.wantOK)
			}
		})
	}
}

func FuzzClassify(f *testing.F) {
	for _, seed := range []string{
		"", "Bearer", "Bearer ", "bearer till_oat_x", "Bearer till_crt_x",
		"Bearer " + auth.Generate(auth.PrefixOrganizationAccessToken),
		"Bearer " + auth.Generate(auth.PrefixOAuthUserAccessToken),
		"Bearer till_at_", "Bearer \xa0\x85", "Basic x", "Bearer é", "Bearer\x00 \x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		_ = auth.Classify(header)
		_ = auth.ChecksumValid(header)
		token, ok := auth.BearerToken(header)
		if !ok {
			if token != "" {
				t.Fatalf("BearerToken(%q) = %q with ok=false", header, token)
			}
			return
		}
		if token == "" {
			t.Fatalf("BearerToken(%q) reported an empty token", header)
		}
		for i := range len(token) {
			if token[i] >= 0x80 {
				t.Fatalf("BearerToken(%q) = %q, which is not ASCII", header, token)
			}
		}
		if !strings.Contains(header, token) {
			t.Fatalf("BearerToken(%q) = %q, which is not part of the header", header, token)
		}
		kind := auth.Classify(token)
		if kind == auth.TokenInvalid && auth.ChecksumValid(token) && !isNonBearerPrefix(token) {
			t.Fatalf("token %q has a valid checksum but classifies as invalid", token)
		}
		_ = kind.String()
	})
}

// isNonBearerPrefix reports whether token carries a prefix Till issues but
// never accepts as a bearer credential.
func isNonBearerPrefix(token string) bool {
	for _, p := range []string{
		auth.PrefixOAuthUserRefreshToken, auth.PrefixOAuthOrganizationRefreshToken,
		auth.PrefixAuthorizationCode, auth.PrefixClientID, auth.PrefixClientSecret,
		auth.PrefixWebhookSecret,
	} {
		if strings.HasPrefix(token, p) {
			return true
		}
	}
	return false
}

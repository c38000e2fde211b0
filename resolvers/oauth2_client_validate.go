package resolvers

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Client metadata limits. Redirect URIs are capped so a registration cannot grow the row and
// every authorization check without bound; URI length is upstream's AnyUrl limit.
const (
	maxOAuth2ClientNameLength = 255
	maxOAuth2RedirectURIs     = 20
	maxOAuth2URILength        = 2083
)

// Wire values of the client's enumerated metadata (RFC 7591 and upstream's SubType).
const (
	authMethodNone      = "none"
	authMethodPost      = "client_secret_post"
	authMethodBasic     = "client_secret_basic"
	grantAuthorization  = "authorization_code"
	grantRefresh        = "refresh_token"
	responseTypeCode    = "code"
	subTypeUser         = "user"
	subTypeOrganization = "organization"
)

var (
	oauth2AuthMethods   = []string{authMethodBasic, authMethodPost, authMethodNone}
	oauth2GrantTypes    = []string{grantAuthorization, grantRefresh}
	oauth2ResponseTypes = []string{responseTypeCode}
	oauth2SubTypes      = []string{subTypeUser, subTypeOrganization}
)

// clientCheck collects every field error of a client input, so one response names all
// of them as pydantic does for a request body.
type clientCheck struct{ items []FieldError }

func (c *clientCheck) fail(typ, msg string, input, ctx any, loc ...any) {
	c.items = append(c.items, FieldError{Type: typ, Loc: append([]any{"input"}, loc...), Msg: msg, Input: input, Ctx: ctx})
}

// valueError records a rule's refusal worded as a pydantic validator's ValueError.
func (c *clientCheck) valueError(msg string, input any, loc ...any) {
	c.fail("value_error", "Value error, "+msg, input, map[string]any{"error": map[string]any{}}, loc...)
}

func (c *clientCheck) err() error {
	if c.items == nil {
		return nil
	}
	return &Error{Code: CodeRequestValidation, Errors: c.items}
}

// checkOAuth2ClientCreate validates a new client and fills upstream's defaults: every
// grantable scope, client_secret_post, both grant types, the code response type and user
// subjects.
func checkOAuth2ClientCreate(in model.OAuth2ClientCreateInput) (storage.OAuth2ClientWrite, error) {
	var c clientCheck
	w := storage.OAuth2ClientWrite{
		ClientName:              c.name(in.ClientName),
		ClientURI:               c.uri(in.ClientURI, "clientUri"),
		LogoURI:                 c.uri(in.LogoURI, "logoUri"),
		TosURI:                  c.uri(in.TosURI, "tosUri"),
		PolicyURI:               c.uri(in.PolicyURI, "policyUri"),
		RedirectURIs:            c.redirectURIs(in.RedirectUris),
		Scope:                   auth.NewScopeSet(auth.AllScopes()...).String(),
		TokenEndpointAuthMethod: authMethodPost,
		GrantTypes:              slices.Clone(oauth2GrantTypes),
		ResponseTypes:           slices.Clone(oauth2ResponseTypes),
		DefaultSubType:          subTypeUser,
	}
	if in.Scope != nil {
		w.Scope = c.scope(*in.Scope)
	}
	if in.TokenEndpointAuthMethod != nil {
		w.TokenEndpointAuthMethod = c.choice("literal_error", *in.TokenEndpointAuthMethod, oauth2AuthMethods, "tokenEndpointAuthMethod")
	}
	if in.GrantTypes != nil {
		w.GrantTypes = c.choices(in.GrantTypes, oauth2GrantTypes, "grantTypes")
	}
	if in.ResponseTypes != nil {
		w.ResponseTypes = c.choices(in.ResponseTypes, oauth2ResponseTypes, "responseTypes")
	}
	if in.DefaultSubType != nil {
		w.DefaultSubType = c.choice("enum", *in.DefaultSubType, oauth2SubTypes, "defaultSubType")
	}
	return w, c.err()
}

// checkOAuth2ClientUpdate validates the fields present by the creation rules and returns
// them as the change to write.
func checkOAuth2ClientUpdate(in model.OAuth2ClientUpdateInput) (storage.OAuth2ClientUpdate, error) {
	var c clientCheck
	var u storage.OAuth2ClientUpdate
	if in.ClientName != nil {
		u.ClientName = storage.Set(c.name(*in.ClientName))
	}
	for _, f := range []struct {
		dst   *storage.Omittable[*string]
		field string
		value graphql.Omittable[*string]
	}{
		{&u.ClientURI, "clientUri", in.ClientURI}, {&u.LogoURI, "logoUri", in.LogoURI},
		{&u.TosURI, "tosUri", in.TosURI}, {&u.PolicyURI, "policyUri", in.PolicyURI},
	} {
		if v, set := f.value.ValueOK(); set {
			*f.dst = storage.Set(c.uri(v, f.field))
		}
	}
	if in.RedirectUris != nil {
		u.RedirectURIs = storage.Set(c.redirectURIs(in.RedirectUris))
	}
	if in.Scope != nil {
		u.Scope = storage.Set(c.scope(*in.Scope))
	}
	if in.TokenEndpointAuthMethod != nil {
		u.TokenEndpointAuthMethod = storage.Set(c.choice("literal_error", *in.TokenEndpointAuthMethod, oauth2AuthMethods, "tokenEndpointAuthMethod"))
	}
	if in.GrantTypes != nil {
		u.GrantTypes = storage.Set(c.choices(in.GrantTypes, oauth2GrantTypes, "grantTypes"))
	}
	if in.ResponseTypes != nil {
		u.ResponseTypes = storage.Set(c.choices(in.ResponseTypes, oauth2ResponseTypes, "responseTypes"))
	}
	if in.DefaultSubType != nil {
		u.DefaultSubType = storage.Set(c.choice("enum", *in.DefaultSubType, oauth2SubTypes, "defaultSubType"))
	}
	return u, c.err()
}

// name checks the display name shown on consent screens; surrounding space is dropped.
func (c *clientCheck) name(v string) string {
	name := strings.TrimSpace(v)
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		c.fail("string_too_short", "String should have at least 1 character", v, map[string]any{"min_length": 1}, "clientName")
	case n > maxOAuth2ClientNameLength:
		c.fail("string_too_long", "String should have at most 255 characters", v,
			map[string]any{"max_length": maxOAuth2ClientNameLength}, "clientName")
	}
	return name
}

// uri checks an informational URL (home page, logo, terms, policy): absolute http(s).
func (c *clientCheck) uri(v *string, field string) *string {
	if v == nil {
		return nil
	}
	if len(*v) > maxOAuth2URILength {
		c.fail("url_too_long", "URL should have at most 2083 characters", *v,
			map[string]any{"max_length": maxOAuth2URILength}, field)
		return v
	}
	u, err := url.Parse(*v)
	if err != nil || !u.IsAbs() || u.Host == "" {
		c.valueError("must be an absolute URL", *v, field)
	} else if u.Scheme != "https" && u.Scheme != "http" {
		c.fail("url_scheme", "URL scheme should be 'http' or 'https'", *v,
			map[string]any{"expected_schemes": "'http' or 'https'"}, field)
	}
	return v
}

// redirectURIs checks the exact URIs codes may be sent to. Every rule closes a way to
// steal a code: a fragment or a wildcard makes the match inexact, and plain http is only
// safe on the loopback interface, where native apps listen (RFC 8252 §7.3).
func (c *clientCheck) redirectURIs(list []string) []string {
	if len(list) == 0 {
		c.fail("too_short", "List should have at least 1 item after validation, not 0", list,
			map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0}, "redirectUris")
		return list
	}
	if len(list) > maxOAuth2RedirectURIs {
		c.fail("too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", maxOAuth2RedirectURIs, len(list)),
			list, map[string]any{"field_type": "List", "max_length": maxOAuth2RedirectURIs, "actual_length": len(list)}, "redirectUris")
		return list
	}
	out := make([]string, 0, len(list))
	for i, raw := range list {
		if !slices.Contains(out, raw) {
			out = append(out, raw)
		}
		if len(raw) > maxOAuth2URILength {
			c.fail("url_too_long", "URL should have at most 2083 characters", raw,
				map[string]any{"max_length": maxOAuth2URILength}, "redirectUris", i)
			continue
		}
		u, err := url.Parse(raw)
		switch {
		case strings.Contains(raw, "*"):
			c.valueError("redirect URIs must not contain wildcards", raw, "redirectUris", i)
		case err != nil || !u.IsAbs() || u.Host == "":
			c.valueError("redirect URIs must be absolute URLs", raw, "redirectUris", i)
		case strings.Contains(raw, "#"):
			c.valueError("redirect URIs must not contain a fragment", raw, "redirectUris", i)
		case u.Scheme == "https":
		case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		default:
			c.fail("url_scheme", "URL scheme should be 'https', or 'http' for a loopback host", raw,
				map[string]any{"expected_schemes": "'https' or 'http'"}, "redirectUris", i)
		}
	}
	return out
}

// isLoopbackHost reports the hosts RFC 8252 lets a native app receive redirects on.
func isLoopbackHost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// scope checks a space-separated scope list against the grantable scopes and returns it
// in canonical order without duplicates, the form the authorization server compares.
func (c *clientCheck) scope(v string) string {
	names := strings.Fields(v)
	if len(names) == 0 {
		c.valueError("at least one scope is required", v, "scope")
		return v
	}
	set := auth.NewScopeSet()
	for _, name := range names {
		s := auth.Scope(name)
		if !s.Known() {
			c.valueError("unknown scope '"+name+"'", v, "scope")
			continue
		}
		set[s] = struct{}{}
	}
	return set.String()
}

// choice checks one enumerated value; typ is pydantic's error type for the field's kind
// (literal_error for Literal fields, enum for enums).
func (c *clientCheck) choice(typ, v string, allowed []string, loc ...any) string {
	if !slices.Contains(allowed, v) {
		c.fail(typ, "Input should be "+quotedChoices(allowed), v, map[string]any{"expected": quotedChoices(allowed)}, loc...)
	}
	return v
}

// choices checks a non-empty list of enumerated values and drops repeats.
func (c *clientCheck) choices(list []string, allowed []string, field string) []string {
	if len(list) == 0 {
		c.fail("too_short", "List should have at least 1 item after validation, not 0", list,
			map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0}, field)
		return list
	}
	out := make([]string, 0, len(list))
	for i, v := range list {
		c.choice("literal_error", v, allowed, field, i)
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

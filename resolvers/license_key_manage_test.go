package resolvers_test

import (
	"regexp"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

func TestActivateAndDeactivateLicenseKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		props  vars
		setup  string // SQL run on the key first ($1 = key id)
		in     vars
		cause  string
		code   string
		reason string
		msg    string
	}{
		{"unknown key", vars{"activations": vars{"limit": 1}}, "", vars{"key": "NOPE"}, "", "NOT_FOUND", "ResourceNotFound", "Not found"},
		{"revoked key", vars{"activations": vars{"limit": 1}}, "UPDATE license_keys SET status = 'revoked' WHERE id = $1", vars{},
			"revoked", "FORBIDDEN", "NotPermitted", "License key is no longer active. This license key can not be activated."},
		{"disabled key", vars{"activations": vars{"limit": 1}}, "UPDATE license_keys SET status = 'disabled' WHERE id = $1", vars{},
			"disabled", "FORBIDDEN", "NotPermitted", "License key is no longer active. This license key can not be activated."},
		{"expired key", vars{"activations": vars{"limit": 1}}, "UPDATE license_keys SET expires_at = now() - interval '1 second' WHERE id = $1",
			vars{}, "expired", "FORBIDDEN", "NotPermitted", "License key has expired."},
		{"key without activations", vars{}, "", vars{}, "activations_not_supported", "FORBIDDEN", "NotPermitted",
			"This license key does not support activations. Use the /validate endpoint instead to check license validity."},
		{"meta key of 41 characters", vars{"activations": vars{"limit": 1}}, "",
			vars{"meta": vars{"k2345678901234567890123456789012345678901": "v"}}, "", "BAD_USER_INPUT", "PolarRequestValidationError",
			"Metadata keys must be 1 to 40 characters long."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newKeyWorld(t, tc.props)
			if tc.setup != "" {
				w.s.Exec(t, tc.setup, w.key.ID)
			}
			in := tc.in
			in["label"] = "m"
			_, err := w.activate(t, in)
			if err == nil || err.Extensions.Code != tc.code || err.Extensions.Reason != tc.reason || err.Message != tc.msg ||
				err.Extensions.Cause != tc.cause {
				t.Errorf("error = %+v, want %s (%s) %q cause %q", err, tc.code, tc.reason, tc.msg, tc.cause)
			}
			if _, _, live := w.counters(t); live != 0 {
				t.Errorf("%d activations stored after a refusal", live)
			}
		})
	}

	t.Run("labels may repeat and be empty; a deactivation frees a slot once", func(t *testing.T) {
		t.Parallel()
		w := newKeyWorld(t, vars{"activations": vars{"limit": 2}})
		a, err := w.activate(t, vars{"label": ""})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.activate(t, vars{"label": ""}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.activate(t, vars{"label": "third"}); err == nil || err.Message != "License key activation limit already reached" {
			t.Fatalf("third activation: %+v", err)
		}
		deactivate := `mutation($in: LicenseKeyDeactivateInput!) { deactivateLicenseKey(input: $in) }`
		in := vars{"in": vars{"key": w.key.Key, "organizationId": w.org.ID, "activationId": a}}
		w.s.Query(t, w.org.Token, deactivate, in, nil)
		if e := w.s.QueryError(t, w.org.Token, deactivate, in); e.Extensions.Code != "NOT_FOUND" || e.Extensions.Reason != "ResourceNotFound" || e.Message != "Not found" {
			t.Errorf("second deactivation: %+v", e)
		}
		if _, err := w.activate(t, vars{"label": "third"}); err != nil {
			t.Errorf("activation after a deactivation: %+v", err)
		}
		w.s.Exec(t, `UPDATE license_keys SET status = 'revoked' WHERE id = $1`, w.key.ID)
		var keyOut struct {
			LicenseKey struct{ Activations []struct{ ID uuid.UUID } }
		}
		w.s.Query(t, w.org.Token, `query($id: UUID!) { licenseKey(id: $id) { activations { id } } }`, vars{"id": w.key.ID}, &keyOut)
		in["in"].(vars)["activationId"] = keyOut.LicenseKey.Activations[0].ID
		w.s.Query(t, "", `mutation($in: LicenseKeyDeactivateInput!) { portalDeactivateLicenseKey(input: $in) }`, in, nil)
		if _, _, live := w.counters(t); live != 1 {
			t.Errorf("live activations = %d, want 1 (a revoked key can still be deactivated)", live)
		}
	})
}

func TestUpdateAndRegenerateLicenseKey(t *testing.T) {
	t.Parallel()
	w := newKeyWorld(t, vars{"prefix": "app", "activations": vars{"limit": 3}, "limit_usage": 100,
		"expires": vars{"ttl": 1, "timeframe": "year"}})
	update := func(tb testing.TB, in vars) licenseKey {
		tb.Helper()
		var out struct{ UpdateLicenseKey licenseKey }
		w.s.Query(tb, w.org.Token, `mutation($id: UUID!, $in: LicenseKeyUpdateInput!) { updateLicenseKey(id: $id, input: $in) { `+
			licenseKeyFields+` } }`, vars{"id": w.key.ID, "in": in}, &out)
		return out.UpdateLicenseKey
	}
	grantState := func(tb testing.TB) (granted bool) {
		tb.Helper()
		w.s.Get(tb, &granted, `SELECT granted_at IS NOT NULL FROM benefit_grants WHERE properties->>'license_key_id' = $1::text`, w.key.ID)
		return granted
	}

	t.Run("only given fields change; null clears", func(t *testing.T) {
		k := update(t, vars{"usage": -5})
		if k.Usage != -5 || k.LimitUsage == nil || *k.LimitUsage != 100 || k.LimitActivations == nil || k.ExpiresAt == nil || k.Status != "granted" {
			t.Errorf("after usage: %+v", k)
		}
		k = update(t, vars{"limitActivations": nil, "limitUsage": nil, "expiresAt": nil, "status": nil})
		if k.LimitActivations != nil || k.LimitUsage != nil || k.ExpiresAt != nil || k.Usage != -5 || k.Status != "granted" {
			t.Errorf("after nulls: %+v", k)
		}
		k = update(t, vars{"limitActivations": 1, "expiresAt": "2030-01-01T00:00:00Z"})
		if *k.LimitActivations != 1 || *k.ExpiresAt != "2030-01-01T00:00:00Z" {
			t.Errorf("after limits: %+v", k)
		}
	})
	t.Run("a zero limit is refused", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, `mutation($id: UUID!) { updateLicenseKey(id: $id, input: {limitUsage: 0}) { id } }`,
			vars{"id": w.key.ID})
		if (e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "RequestValidationError") || e.Extensions.Fields[0].Type != "greater_than" {
			t.Errorf("error = %+v", e)
		}
	})
	t.Run("revoking revokes the grant; granting grants it again; disabling keeps it", func(t *testing.T) {
		before := w.events(t)
		if k := update(t, vars{"status": "revoked"}); k.Status != "revoked" || grantState(t) {
			t.Errorf("revoked: %+v, grant granted %v", k, grantState(t))
		}
		if k := update(t, vars{"status": "disabled"}); k.Status != "disabled" || !grantState(t) {
			t.Errorf("disabled: %+v, grant granted %v", k, grantState(t))
		}
		if got := w.validate(t, "", vars{}); got.Code != "disabled" {
			t.Errorf("validating a disabled key: %+v", got)
		}
		update(t, vars{"status": "granted"})
		after := w.events(t)
		if after["benefit_grant.revoked"]-before["benefit_grant.revoked"] != 1 || after["benefit_grant.updated"]-before["benefit_grant.updated"] != 1 {
			t.Errorf("events before %v after %v, want one revoked and one updated", before, after)
		}
	})
	t.Run("regenerating changes the text only; the old text stops validating", func(t *testing.T) {
		var out struct{ RegenerateLicenseKey licenseKey }
		w.s.Query(t, w.org.Token, `mutation($id: UUID!) { regenerateLicenseKey(id: $id) { `+licenseKeyFields+` } }`, vars{"id": w.key.ID}, &out)
		k := out.RegenerateLicenseKey
		if k.ID != w.key.ID || k.Key == w.key.Key || !regexp.MustCompile(`^APP-`+keyBody+`$`).MatchString(k.Key) || k.DisplayKey != "****-"+k.Key[len(k.Key)-6:] {
			t.Errorf("regenerated %+v from %q", k, w.key.Key)
		}
		if got := w.validate(t, "", vars{}); got.Code != "not_found" {
			t.Errorf("old key: %+v", got)
		}
		if got := w.validate(t, "", vars{"key": k.Key}); !got.Valid {
			t.Errorf("new key: %+v", got)
		}
		var display string
		w.s.Get(t, &display, `SELECT properties->>'display_key' FROM benefit_grants WHERE properties->>'license_key_id' = $1::text`, w.key.ID)
		if display != k.DisplayKey {
			t.Errorf("grant display_key = %q, want %q", display, k.DisplayKey)
		}
	})
	t.Run("another organization's key is not found", func(t *testing.T) {
		other := w.s.NewOrg(t, resolverstest.AllScopes)
		for _, q := range []string{`query($id: UUID!) { licenseKey(id: $id) { id } }`,
			`mutation($id: UUID!) { updateLicenseKey(id: $id, input: {usage: 1}) { id } }`,
			`mutation($id: UUID!) { regenerateLicenseKey(id: $id) { id } }`} {
			if e := w.s.QueryError(t, other.Token, q, vars{"id": w.key.ID}); e.Extensions.Code != "NOT_FOUND" || e.Extensions.Reason != "ResourceNotFound" {
				t.Errorf("%s: %+v", q, e)
			}
		}
		ref := vars{"key": w.licenseKeys(t, w.benefit.ID)[0].Key, "organizationId": w.org.ID}
		for q, in := range map[string]vars{
			`mutation($in: LicenseKeyActivateInput!) { activateLicenseKey(input: $in) { id } }`: {"label": "m"},
			`mutation($in: LicenseKeyDeactivateInput!) { deactivateLicenseKey(input: $in) }`:    {"activationId": uuid.New()},
		} {
			in["key"], in["organizationId"] = ref["key"], ref["organizationId"]
			if e := w.s.QueryError(t, other.Token, q, vars{"in": in}); e.Extensions.Code != "NOT_FOUND" || e.Extensions.Reason != "ResourceNotFound" || e.Message != "Not found" {
				t.Errorf("%s with another organization's token: %+v", q, e)
			}
		}
		if got := w.validate(t, other.Token, vars{}); got.Code != "not_found" {
			t.Errorf("validating another organization's key with a token: %+v", got)
		}
	})
}

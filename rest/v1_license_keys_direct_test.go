package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/auth"
	"till/rest"
	"till/rest/fastapi"
	"till/rest/resttest"
)

// The validate routes render their answer without executing their persisted operation.
// The operation still defines the shape: the same validations answered both ways must be
// the same bytes, the validation counter aside (each answer is one more validation).
func TestValidateRoutesRenderExactlyTheirOperation(t *testing.T) {
	t.Parallel()
	f := newKeysFixture(t)
	now := time.Date(2027, 3, 4, 5, 6, 7, 891011000, time.UTC)
	f.s.Clock.Set(now)
	f.s.Exec(t, `UPDATE customers SET name = 'Ada <Lovelace> & "Co"', billing_name = 'Ada Ltd', locale = 'de-DE',
		billing_address = '{"line1": "Main St 1", "line2": null, "postal_code": "10115", "city": "Berlin", "state": null, "country": "DE"}',
		tax_id = 'DE123456789', tax_id_format = 'eu_vat', metadata = '{"tier": "gold", "n": 1, "ok": true, "x": 1.5}' WHERE id = $1`, f.customer)
	activation := f.activate(t, "KEY-A", `,"meta":{"os":"linux","cores":8}`)
	operationOnly, err := rest.NewRouter(rest.Config{Executor: f.s.Resolver.Executor(), Routes: rest.Routes(),
		Schema: f.s.Resolver.Schema().Schema(), Authenticate: auth.Middleware(f.s.Resolver, f.s.Secret)})
	if err != nil {
		t.Fatal(err)
	}
	counter := regexp.MustCompile(`"validations":(\d+)`)
	for _, tc := range []struct {
		name, path, token, body string
	}{
		{"organization route with an activation", "/v1/license-keys/validate", f.org.Token,
			f.body("KEY-A", fmt.Sprintf(`"activation_id":%q,"increment_usage":0`, activation))},
		{"public route, key with limits", "/v1/customer-portal/license-keys/validate", "", f.body("KEY-A", "")},
		{"public route, key without limits", "/v1/customer-portal/license-keys/validate", "", f.body("KEY-D", "")},
		{"a failure", "/v1/customer-portal/license-keys/validate", "", f.body("KEY-C", "")},
		{"a usage failure", "/v1/license-keys/validate", f.org.Token, f.body("KEY-A", `"increment_usage":100`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(h http.Handler) *httptest.ResponseRecorder {
				return resttest.Serve(t, h, call{method: http.MethodPost, target: tc.path, token: tc.token, body: tc.body}.request())
			}
			viaOperation := answer(operationOnly)
			direct := answer(f.s.h)
			want := counter.ReplaceAllStringFunc(viaOperation.Body.String(), func(m string) string {
				n, _ := strconv.Atoi(counter.FindStringSubmatch(m)[1])
				return `"validations":` + strconv.Itoa(n+1)
			})
			if viaOperation.Code != direct.Code || want != direct.Body.String() {
				t.Errorf("operation answered %d %s\ndirect answered    %d %s", viaOperation.Code, want, direct.Code, direct.Body)
			}
		})
	}
}

func TestDirectRoutePanicIsAnInternalError(t *testing.T) {
	t.Parallel()
	h, err := rest.NewRouter(rest.Config{Executor: rest.ExecutorFunc(nil), Routes: []rest.Route{{
		Method: http.MethodPost, Path: "/v1/license-keys/validate", Operation: "ValidateLicenseKey",
		Field: "validateLicenseKey.licenseKey", Body: &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "B"}},
		Direct: func(context.Context, map[string]any) (json.RawMessage, *gqlerror.Error) { panic("boom") },
	}}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, call{method: http.MethodPost, target: "/v1/license-keys/validate", body: `{}`}.request())
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("a panicking route answered %d %s, want 500", rec.Code, rec.Body)
	}
}

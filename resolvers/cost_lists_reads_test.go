package resolvers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// TestListsThatGrowWithoutEndShowTheirLatest holds the lists that retries and redeliveries
// lengthen without a cap to the size the schema declares, and caps published signing keys
// at rotation, so each is an honest bound of what one alias reads.
func TestListsThatGrowWithoutEndShowTheirLatest(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	t.Run("a job with 30 errors shows its latest 25", func(t *testing.T) {
		t.Parallel()
		var entries []string
		for i := 1; i <= 30; i++ {
			entries = append(entries, fmt.Sprintf(`{"at": "2026-01-01T00:00:00Z", "attempt": %d, "error": "boom"}`, i))
		}
		id := insertJobs(t, s, jobRow{org: &org.ID, kind: "invoice.render", state: "discarded", createdAt: time.Now(),
			attempt: 30, max: 30, errors: "[" + strings.Join(entries, ",") + "]"})[0]
		var out struct {
			Job struct{ Errors []struct{ Attempt int } }
		}
		s.Query(t, org.Token, `query($id: UUID!) { job(id: $id) { errors { attempt } } }`, vars{"id": id}, &out)
		if n := len(out.Job.Errors); n != resolvers.MaxJobErrors || out.Job.Errors[0].Attempt != 6 || out.Job.Errors[n-1].Attempt != 30 {
			t.Fatalf("errors = %+v, want attempts 6 to 30", out.Job.Errors)
		}
	})
	t.Run("an event delivered 30 times shows its latest 20 deliveries", func(t *testing.T) {
		t.Parallel()
		attempts := make([]int, 30)
		for i := range attempts {
			attempts[i] = 500
		}
		id := insertHookEvents(t, s, org.ID, hookEvent{endpoint: insertEndpoint(t, s, org.ID), typ: "order.updated",
			succeeded: ptr(false), attempts: attempts})[0]
		var out struct {
			WebhookEvent struct{ Deliveries []struct{ Attempt int } }
		}
		s.Query(t, org.Token, `query($id: UUID!) { webhookEvent(id: $id) { deliveries { attempt } } }`, vars{"id": id}, &out)
		d := out.WebhookEvent.Deliveries
		if len(d) != resolvers.MaxEventDeliveries || d[0].Attempt != 11 || d[len(d)-1].Attempt != 30 {
			t.Fatalf("deliveries = %+v, want attempts 11 to 30", d)
		}
	})
	t.Run("a rotation past 10 published signing keys is refused as bad input", func(t *testing.T) {
		t.Parallel()
		o := s.NewOrg(t, resolverstest.AllScopes)
		for range resolvers.MaxPublishedSigningKeys {
			s.Query(t, o.Token, `mutation { rotateLicenseSigningKey { keyId } }`, nil, nil)
		}
		e := s.QueryError(t, o.Token, `mutation { rotateLicenseSigningKey { keyId } }`, nil)
		if e.Extensions.Code != "BAD_USER_INPUT" || len(e.Extensions.Fields) != 1 || e.Extensions.Fields[0].Type != "too_long" {
			t.Fatalf("error = %+v, want BAD_USER_INPUT too_long", e)
		}
		var keys struct{ LicenseSigningKeys []struct{ KeyID string } }
		s.Query(t, o.Token, `{ licenseSigningKeys { keyId } }`, nil, &keys)
		if len(keys.LicenseSigningKeys) != resolvers.MaxPublishedSigningKeys {
			t.Errorf("%d published keys, want %d", len(keys.LicenseSigningKeys), resolvers.MaxPublishedSigningKeys)
		}
	})
}

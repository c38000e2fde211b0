package resolvers_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// uploadedParts creates a one-part file, uploads its bytes and returns its id and the
// completion input.
func uploadedParts(t *testing.T, s *resolverstest.Server, token string) (uuid.UUID, vars) {
	t.Helper()
	var out struct {
		CreateFile struct {
			ID     uuid.UUID
			Upload struct {
				ID, Path string
				Parts    []struct {
					Number  int
					URL     string
					Headers map[string]string
				}
			}
		}
	}
	s.Query(t, token, createFileDoc, vars{"input": fileInput("downloadable", "a.txt", "text/plain", 5)}, &out)
	up := out.CreateFile.Upload
	req, err := http.NewRequest(http.MethodPut, up.Parts[0].URL, bytes.NewReader([]byte("hello")))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range up.Parts[0].Headers {
		if !strings.EqualFold(k, "Content-Length") {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return out.CreateFile.ID, vars{"id": up.ID, "path": up.Path,
		"parts": []vars{{"number": 1, "checksumEtag": resp.Header.Get("ETag")}}}
}

func TestAuditRecordsCatalogAndSettingsMutations(t *testing.T) {
	t.Parallel()
	w := newDownloadWorld(t) // its files live on a local store served over HTTP, so uploads complete
	s, org := w.s, w.org
	tok := org.Token
	perk := newBenefit(t, s, tok, "Perk")
	gone := newBenefit(t, s, tok, "Gone")
	prod := createProduct(t, s, tok, vars{"name": "Book", "prices": []vars{{"amountType": "fixed", "priceAmount": 500}}})
	disc := ckDiscount(t, s, tok, vars{"name": "Ten", "type": "percentage", "basisPoints": 1000, "duration": "once"})
	m := createMeter(t, s, tok, apiCallsInput(nil))
	hook := createWebhook(t, s, tok, webhookInput(nil))
	cust := s.NewCustomer(t, org.ID, "")
	shelf := createProduct(t, s, tok, vars{"name": "Shelf", "prices": []vars{{"amountType": "fixed", "priceAmount": 300}}})
	ck := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{shelf.ID}})
	file := insertFile(t, s, org.ID)
	uploading, completion := uploadedParts(t, s, tok)
	var job, event uuid.UUID
	s.Get(t, &job, `INSERT INTO jobs (organization_id, kind, state, finished_at) VALUES ($1, 'order.invoice', 'discarded', now())
		RETURNING id`, org.ID)
	s.Get(t, &event, `INSERT INTO webhook_events (organization_id, webhook_endpoint_id, type, payload, succeeded)
		VALUES ($1, $2, 'order.paid', '{}', false) RETURNING id`, org.ID, hook.ID)
	waiting := uuid.Nil
	s.Get(t, &waiting, `INSERT INTO jobs (organization_id, kind) VALUES ($1, 'order.invoice') RETURNING id`, org.ID)

	runAuditCases(t, s, []auditCase{
		{"creating a benefit records it", tok, `mutation { createBenefit(input: {type: custom, description: "Support",
			properties: {note: "hi"}}) { id } }`, nil, byOrg, []auditWant{{"benefit", created, "description", uuid.Nil}}},
		{"updating a benefit records the new description", tok, `mutation($id: UUID!) { updateBenefit(input: {id: $id,
			description: "Perks"}) { id } }`, vars{"id": perk.ID}, byOrg, []auditWant{{"benefit", updated, "description", perk.ID}}},
		{"deleting a benefit records a delete", tok, `mutation($id: UUID!) { deleteBenefit(id: $id) { id } }`,
			vars{"id": gone.ID}, byOrg, []auditWant{{"benefit", deleted, "deleted_at", gone.ID}}},
		{"creating a product records it and its price", tok, `mutation { createProduct(input: {name: "Course",
			prices: [{amountType: fixed, priceAmount: 900}]}) { id } }`, nil, byOrg,
			[]auditWant{{"product", created, "name", uuid.Nil}, {"product_price", created, "price_amount", uuid.Nil}}},
		{"renaming a product records the name", tok, `mutation($id: UUID!) { updateProduct(input: {id: $id, name: "Big book"}) { id } }`,
			vars{"id": prod.ID}, byOrg, []auditWant{{"product", updated, "name", prod.ID}}},
		{"giving a product a benefit records the link under the product", tok, `mutation($id: UUID!, $b: UUID!) {
			updateProductBenefits(input: {id: $id, benefitIds: [$b]}) { id } }`, vars{"id": prod.ID, "b": perk.ID}, byOrg,
			[]auditWant{{"product_benefit", created, "benefit_id", prod.ID}}},
		{"archiving a product records is_archived", tok, `mutation($id: UUID!) { archiveProduct(id: $id) { id } }`,
			vars{"id": prod.ID}, byOrg, []auditWant{{"product", updated, "is_archived", prod.ID}}},
		{"creating a discount records it", tok, `mutation { createDiscount(input: {name: "Five", type: fixed, amount: 500,
			currency: "usd", duration: once}) { id } }`, nil, byOrg, []auditWant{{"discount", created, "amount", uuid.Nil}}},
		{"renaming a discount records the name", tok, `mutation($id: UUID!) { updateDiscount(input: {id: $id, name: "Tenth"}) { id } }`,
			vars{"id": disc}, byOrg, []auditWant{{"discount", updated, "name", disc}}},
		{"deleting a discount records a delete", tok, `mutation($id: UUID!) { deleteDiscount(id: $id) { id } }`,
			vars{"id": disc}, byOrg, []auditWant{{"discount", deleted, "deleted_at", disc}}},
		{"creating a meter records it", tok, `mutation($in: MeterCreateInput!) { createMeter(input: $in) { id } }`,
			vars{"in": apiCallsInput(vars{"name": "Tokens"})}, byOrg, []auditWant{{"meter", created, "name", uuid.Nil}}},
		{"renaming a meter records the name", tok, `mutation($id: UUID!) { updateMeter(input: {id: $id, name: "Calls"}) { id } }`,
			vars{"id": m.ID}, byOrg, []auditWant{{"meter", updated, "name", m.ID}}},
		{"archiving a meter records archived_at", tok, `mutation($id: UUID!) { archiveMeter(id: $id) { id } }`,
			vars{"id": m.ID}, byOrg, []auditWant{{"meter", updated, "archived_at", m.ID}}},
		{"creating a webhook endpoint records it and redacts its secret", tok, `mutation($in: WebhookEndpointCreateInput!) {
			createWebhookEndpoint(input: $in) { id } }`, vars{"in": webhookInput(nil)}, byOrg,
			[]auditWant{{"webhook_endpoint", created, "secret", uuid.Nil}}},
		{"disabling a webhook endpoint records enabled", tok, `mutation($id: UUID!) { updateWebhookEndpoint(input: {id: $id,
			enabled: false}) { id } }`, vars{"id": hook.ID}, byOrg, []auditWant{{"webhook_endpoint", updated, "enabled", hook.ID}}},
		{"rotating a webhook secret records that the secret changed", tok, `mutation($id: UUID!) {
			rotateWebhookEndpointSecret(id: $id) { id } }`, vars{"id": hook.ID}, byOrg,
			[]auditWant{{"webhook_endpoint", updated, "secret", hook.ID}}},
		{"redelivering a webhook event records the event", tok, `mutation($id: UUID!) { redeliverWebhookEvent(id: $id) { id } }`,
			vars{"id": event}, byOrg, []auditWant{{"webhook_event", updated, "", event}}},
		{"deleting a webhook endpoint records a delete", tok, `mutation($id: UUID!) { deleteWebhookEndpoint(id: $id) { id } }`,
			vars{"id": hook.ID}, byOrg, []auditWant{{"webhook_endpoint", deleted, "deleted_at", hook.ID}}},
		{"creating a customer records it", tok, `mutation { createCustomer(input: {email: "new@example.com"}) { id } }`,
			nil, byOrg, []auditWant{{"customer", created, "email", uuid.Nil}}},
		{"renaming a customer records the name", tok, `mutation($id: UUID!) { updateCustomer(input: {id: $id, name: "Ada"}) { id } }`,
			vars{"id": cust.ID}, byOrg, []auditWant{{"customer", updated, "name", cust.ID}}},
		{"opening a portal session records it without its token", tok, `mutation($id: UUID!) {
			createCustomerSession(input: {customerId: $id}) { token } }`, vars{"id": cust.ID}, byOrg,
			[]auditWant{{"customer_session", created, "token", uuid.Nil}}},
		{"creating a checkout records it", tok, `mutation($p: UUID!) { createCheckout(input: {products: [$p]}) { id } }`,
			vars{"p": shelf.ID}, byOrg, []auditWant{{"checkout", created, "product_id", uuid.Nil}}},
		{"updating a checkout records the buyer's name", tok, `mutation($id: UUID!) { updateCheckout(input: {id: $id,
			customerName: "Ada"}) { id } }`, vars{"id": ck.ID}, byOrg, []auditWant{{"checkout", updated, "customer_name", ck.ID}}},
		{"creating a file records it", tok, `mutation($in: FileCreateInput!) { createFile(input: $in) { id } }`,
			vars{"in": fileInput("downloadable", "b.txt", "text/plain", 3)}, byOrg, []auditWant{{"file", created, "name", uuid.Nil}}},
		{"completing an upload records the file uploaded", tok, `mutation($id: UUID!, $in: FileUploadCompletedInput!) {
			completeFileUpload(id: $id, input: $in) { id } }`, vars{"id": uploading, "in": completion}, byOrg,
			[]auditWant{{"file", updated, "is_uploaded", uploading}}},
		{"renaming a file records the name", tok, `mutation($id: UUID!) { updateFile(id: $id, input: {name: "b.txt"}) { id } }`,
			vars{"id": file}, byOrg, []auditWant{{"file", updated, "name", file}}},
		{"deleting a file records a delete", tok, `mutation($id: UUID!) { deleteFile(id: $id) { id } }`,
			vars{"id": file}, byOrg, []auditWant{{"file", deleted, "deleted_at", file}}},
		{"retrying a job records its state", tok, `mutation($id: UUID!) { retryJob(id: $id) { id } }`,
			vars{"id": job}, byOrg, []auditWant{{"job", updated, "state", job}}},
		{"cancelling a job records its state", tok, `mutation($id: UUID!) { cancelJob(id: $id) { id } }`,
			vars{"id": waiting}, byOrg, []auditWant{{"job", updated, "state", waiting}}},
		{"advancing the test clock records it", tok, `mutation { advanceTestClock(input: {to: "2031-01-01T00:00:00Z"}) { renewals } }`,
			nil, byOrg, []auditWant{{"test_clock", created, "frozen_at", org.ID}}},
		{"rotating the license signing key records the new key and redacts its private half", tok,
			`mutation { rotateLicenseSigningKey { keyId } }`, nil, byOrg,
			[]auditWant{{"license_signing_key", created, "sealed_private_key", uuid.Nil}}},
		{"ingesting usage events records nothing: the data plane's volume", tok, `mutation {
			ingestEvents(input: {events: [{name: "api_call", externalCustomerId: "x"}]}) { inserted } }`, nil, byOrg, nil},
		{"deleting a customer records a delete", tok, `mutation($id: UUID!) { deleteCustomer(id: $id) { id } }`,
			vars{"id": cust.ID}, byOrg, []auditWant{{"customer", deleted, "deleted_at", cust.ID}}},
	})
}

func TestAuditRecordsMetricDashboards(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	const create = `mutation($in: MetricDashboardCreateInput!) { createMetricDashboard(input: $in) { id } }`
	dashboard := func(name string) uuid.UUID {
		var out struct{ CreateMetricDashboard struct{ ID uuid.UUID } }
		s.Query(t, org.Token, create, vars{"in": vars{"name": name, "metrics": []string{"revenue"}}}, &out)
		return out.CreateMetricDashboard.ID
	}
	renamed, removed := dashboard("Old"), dashboard("Gone")
	runAuditCases(t, s, []auditCase{
		{"creating a dashboard records it", org.Token, create, vars{"in": vars{"name": "Sales", "metrics": []string{"orders"}}},
			byOrg, []auditWant{{"metric_dashboard", created, "name", uuid.Nil}}},
		{"renaming a dashboard records the name", org.Token,
			`mutation($in: MetricDashboardUpdateInput!) { updateMetricDashboard(input: $in) { id } }`,
			vars{"in": vars{"id": renamed, "name": "New"}}, byOrg, []auditWant{{"metric_dashboard", updated, "name", renamed}}},
		{"deleting a dashboard records a delete", org.Token, `mutation($id: UUID!) { deleteMetricDashboard(id: $id) { id } }`,
			vars{"id": removed}, byOrg, []auditWant{{"metric_dashboard", deleted, "", removed}}},
	})
}

package storage_test

import (
	"testing"
	"time"

	"till/storage"
)

// BenchmarkDecodeCustomer measures decoding a carried customer with every column set, escapes
// and nested metadata included: the cost a prefetch adds per distinct record, to weigh
// against the statement it saves.
func BenchmarkDecodeCustomer(b *testing.B) {
	raw := []byte(`{"id":"9a464479-c1dc-4223-b1a7-dd6932b6d938","created_at":"2026-11-26T10:14:21.854778-03:30","modified_at":"2024-03-30T22:30:00-02:30","deleted_at":null,"organization_id":"a6c56259-a5b1-40fb-8e53-c0aa6854b501","type":"individual","external_id":"ext-1","email":"Ünï\"code\\@example.com","email_verified":true,"name":"Zoë \"Q\" \\ Tab\there","billing_name":"Billing Name","billing_address":{"city": "Paris", "line1": "1 Rue", "line2": null, "state": null, "country": "FR", "postal_code": "75001"},"tax_id":"FR123","tax_id_format":"eu_vat","locale":"fr-FR","metadata":{"n": 1.5, "big": 12345678901234, "plan": "gold", "nested": {"a": [1, "x", null, true]}},"avatar_url":"https://example.com/a.png","first_user_event_at":"2024-03-30T22:29:59-02:30","default_payment_method_id":"37a269be-3e79-4aae-b4bd-964b4cc64997"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := storage.DecodeRecord[storage.Customer](raw, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeProduct measures decoding a carried product, the record a portal page's
// orders and subscriptions carry.
func BenchmarkDecodeProduct(b *testing.B) {
	raw := []byte(`{"id":"183d268f-bb9f-4223-88a0-58283be2dab6","created_at":"2026-11-26T14:44:21.866179+00:00","modified_at":null,"organization_id":"a6c56259-a5b1-40fb-8e53-c0aa6854b501","name":"Ebook","description":null,"visibility":"public","recurring_interval":null,"recurring_interval_count":null,"meter_interval":null,"meter_interval_count":null,"trial_interval":null,"trial_interval_count":null,"is_archived":false,"metadata":{}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := storage.DecodeRecord[storage.Product](raw, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

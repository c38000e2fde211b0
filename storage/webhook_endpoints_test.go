package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/lib/pq"

	"till/storage"
	"till/storage/storagetest"
)

func TestWebhookEventTypesMirrorTheDatabase(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	var inSQL pq.StringArray
	if err := db.GetContext(context.Background(), &inSQL, `SELECT webhook_event_types()`); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(inSQL), storage.WebhookEventTypes()); diff != "" {
		t.Errorf("WebhookEventTypes() differs from webhook_event_types() (-sql +go):\n%s", diff)
	}
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storagetest.New(t)
	org, err := storage.CreateOrganization(ctx, db, "Hooks", "hooks-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	other, err := storage.CreateOrganization(ctx, db, "Other", "other-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	create := func(orgID uuid.UUID, url string) *storage.WebhookEndpoint {
		t.Helper()
		e, err := storage.CreateWebhookEndpoint(ctx, db, orgID, storage.WebhookEndpointWrite{URL: url, Format: "raw",
			Secret: "whsec_test", Events: nil})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	first := create(org.ID, "https://a.example/")
	second := create(org.ID, "https://b.example/")
	foreign := create(other.ID, "https://c.example/")
	db.MustExec(`UPDATE webhook_endpoints SET created_at = now() - interval '1 hour' WHERE id = $1`, first.ID)
	if !first.Enabled || first.Events == nil || len(first.Events) != 0 || first.ModifiedAt != nil {
		t.Errorf("new endpoint = %+v, want enabled, no events, never modified", first)
	}

	both := []uuid.UUID{org.ID, other.ID}
	ids := func(orgs, filter []uuid.UUID) []uuid.UUID {
		t.Helper()
		p, err := storage.ListWebhookEndpoints(ctx, db, orgs, filter, storage.Window{Page: 1, Limit: 10})
		items, total := p.Items, p.Total
		if err != nil {
			t.Fatal(err)
		}
		out := make([]uuid.UUID, len(items))
		for i, e := range items {
			out[i] = e.ID
		}
		if total != len(out) {
			t.Errorf("total = %d, want %d", total, len(out))
		}
		return out
	}
	if diff := cmp.Diff([]uuid.UUID{second.ID, first.ID}, ids([]uuid.UUID{org.ID}, nil)); diff != "" {
		t.Errorf("list, newest first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uuid.UUID{foreign.ID}, ids(both, []uuid.UUID{other.ID})); diff != "" {
		t.Errorf("list filtered by organization (-want +got):\n%s", diff)
	}
	if got := ids([]uuid.UUID{org.ID}, []uuid.UUID{other.ID}); len(got) != 0 {
		t.Errorf("a filter cannot widen the visible organizations: got %v", got)
	}

	updated, err := storage.UpdateWebhookEndpoint(ctx, db, []uuid.UUID{org.ID}, first.ID,
		storage.WebhookEndpointUpdate{Events: storage.Set([]string{"order.paid", "order.updated"}), Enabled: storage.Set(false)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pq.StringArray{"order.paid", "order.updated"}, updated.Events); diff != "" || updated.Enabled || updated.ModifiedAt == nil {
		t.Errorf("updated = %+v (events diff %s)", updated, diff)
	}
	if _, err := storage.UpdateWebhookEndpoint(ctx, db, []uuid.UUID{org.ID}, first.ID, storage.WebhookEndpointUpdate{Events: storage.Set([]string{"nope"})}); err == nil {
		t.Error("an unknown event type was stored")
	}
	rotated, err := storage.RotateWebhookEndpointSecret(ctx, db, []uuid.UUID{org.ID}, first.ID, "whsec_new")
	if err != nil || rotated.Secret != "whsec_new" {
		t.Fatalf("rotate = %+v, %v", rotated, err)
	}

	if _, err := storage.DeleteWebhookEndpoint(ctx, db, []uuid.UUID{other.ID}, first.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleting another organization's endpoint: %v, want ErrNotFound", err)
	}
	if _, err := storage.DeleteWebhookEndpoint(ctx, db, []uuid.UUID{org.ID}, first.ID); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"delete again": func() error {
			_, err := storage.DeleteWebhookEndpoint(ctx, db, []uuid.UUID{org.ID}, first.ID)
			return err
		}(),
		"get": func() error { _, err := storage.GetWebhookEndpoint(ctx, db, []uuid.UUID{org.ID}, first.ID); return err }(),
		"update": func() error {
			_, err := storage.UpdateWebhookEndpoint(ctx, db, []uuid.UUID{org.ID}, first.ID, storage.WebhookEndpointUpdate{Enabled: storage.Set(true)})
			return err
		}(),
	} {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s after delete: %v, want ErrNotFound", name, err)
		}
	}
	if diff := cmp.Diff([]uuid.UUID{second.ID}, ids([]uuid.UUID{org.ID}, nil)); diff != "" {
		t.Errorf("list after delete (-want +got):\n%s", diff)
	}
}

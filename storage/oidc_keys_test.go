package storage_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

func TestCreateAndReadCurrentOIDCSigningKey(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	if _, err := storage.CurrentOIDCSigningKey(ctx, db); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("current key before any: err = %v, want ErrNotFound", err)
	}
	created := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	pub, sealed := randomBytes(294), randomBytes(1250)
	k, err := storage.CreateOIDCSigningKey(ctx, db, "kid-1", pub, sealed, created)
	if err != nil {
		t.Fatal(err)
	}
	got, err := storage.CurrentOIDCSigningKey(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.KeyID != "kid-1" || string(got.PublicKey) != string(pub) ||
		string(got.SealedPrivateKey) != string(sealed) || !got.CreatedAt.Equal(created) || got.RetiredAt != nil || got.ValidUntil != nil {
		t.Errorf("current key = %+v, want the created one %+v", got, k)
	}
	if _, err := storage.CreateOIDCSigningKey(ctx, db, "kid-1", pub, sealed, created); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("repeated kid: err = %v, want ErrConflict", err)
	}
}

func TestSecondCurrentOIDCSigningKeyConflicts(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	first, err := storage.CreateOIDCSigningKey(ctx, db, "kid-1", randomBytes(32), randomBytes(60), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The conflict must leave the transaction usable, so the caller can read the winner's key.
	err = storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := storage.CreateOIDCSigningKey(ctx, tx, "kid-2", randomBytes(32), randomBytes(60), time.Now()); !errors.Is(err, storage.ErrConflict) {
			t.Errorf("second current key: err = %v, want ErrConflict", err)
		}
		k, err := storage.CurrentOIDCSigningKey(ctx, tx)
		if err == nil && k.ID != first.ID {
			t.Errorf("current key = %s, want %s", k.ID, first.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentFirstOIDCSigningKeysLeaveOne(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	const racers = 12
	var wg sync.WaitGroup
	errs := make([]error, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			_, errs[i] = storage.CreateOIDCSigningKey(ctx, db, "kid-"+string(rune('a'+i)), randomBytes(32), randomBytes(60), time.Now())
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storage.ErrConflict):
			t.Errorf("unexpected error: %v", err)
		}
	}
	var rows int
	if err := db.GetContext(ctx, &rows, `SELECT count(*) FROM oidc_signing_keys`); err != nil {
		t.Fatal(err)
	}
	if won != 1 || rows != 1 {
		t.Errorf("%d creations succeeded and %d rows exist, want 1 and 1", won, rows)
	}
}

func TestRetireOIDCSigningKeyOnlyOnce(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Second)
	k, err := storage.CreateOIDCSigningKey(ctx, db, "kid-1", randomBytes(32), randomBytes(60), now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		ok, err := storage.RetireOIDCSigningKey(ctx, db, k.ID, now, now.Add(2*time.Hour))
		if err != nil || ok != want {
			t.Errorf("retirement %d: ok = %v, err = %v, want %v", i+1, ok, err, want)
		}
	}
	if _, err := storage.CurrentOIDCSigningKey(ctx, db); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("current key after retirement: err = %v, want ErrNotFound", err)
	}
	if _, err := storage.RetireOIDCSigningKey(ctx, db, k.ID, now, now.Add(-time.Second)); err != nil {
		t.Errorf("retiring a retired key again: err = %v, want none (nothing to do)", err)
	}
	k2, err := storage.CreateOIDCSigningKey(ctx, db, "kid-2", randomBytes(32), randomBytes(60), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.RetireOIDCSigningKey(ctx, db, k2.ID, now, now.Add(-time.Second)); !errors.Is(err, storage.ErrReference) {
		t.Errorf("valid_until before retired_at: err = %v, want ErrReference", err)
	}
}

func TestPublishedOIDCSigningKeys(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Second)
	// Three generations: an old key whose tokens have all expired, a recently retired key
	// whose tokens may still be live, and the current key.
	var ids []string
	for i, validUntil := range []time.Time{now.Add(-time.Minute), now.Add(time.Hour)} {
		k, err := storage.CreateOIDCSigningKey(ctx, db, "kid-"+string(rune('a'+i)), randomBytes(32), randomBytes(60), now.Add(time.Duration(i-3)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		retiredAt := now.Add(time.Duration(i-2) * time.Hour)
		if ok, err := storage.RetireOIDCSigningKey(ctx, db, k.ID, retiredAt, validUntil); err != nil || !ok {
			t.Fatalf("retire %s: ok = %v, err = %v", k.KeyID, ok, err)
		}
		ids = append(ids, k.KeyID)
	}
	current, err := storage.CreateOIDCSigningKey(ctx, db, "kid-current", randomBytes(32), randomBytes(60), now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := storage.PublishedOIDCSigningKeys(ctx, db, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.KeyID)
	}
	if want := []string{current.KeyID, ids[1]}; !slices.Equal(got, want) {
		t.Errorf("published keys = %v, want %v (the expired generation %s dropped)", got, want, ids[0])
	}
}

package storage_test

import (
	"crypto/rand"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

func newOrganization(t *testing.T, db sqlx.ExtContext, slug string) *storage.Organization {
	t.Helper()
	o, err := storage.CreateOrganization(t.Context(), db, "Org "+slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// randomBytes stands for a public or sealed private key: storage never interprets them.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestCreateAndReadActiveLicenseSigningKey(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	if _, err := storage.ActiveLicenseSigningKey(ctx, db, org.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("active key before any: err = %v, want ErrNotFound", err)
	}
	pub, sealed := randomBytes(32), randomBytes(60)
	created, err := storage.CreateLicenseSigningKey(ctx, db, org.ID, "kid-1", pub, sealed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := storage.ActiveLicenseSigningKey(ctx, db, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != created.ID || got.KeyID != "kid-1" || string(got.PublicKey) != string(pub) ||
		string(got.SealedPrivateKey) != string(sealed) || got.RetiredAt != nil || got.ValidUntil != nil {
		t.Errorf("active key = %+v, want the created one %+v", got, created)
	}
	if _, err := storage.CreateLicenseSigningKey(ctx, db, org.ID, "kid-short", randomBytes(31), sealed); !errors.Is(err, storage.ErrReference) {
		t.Errorf("31-byte public key: err = %v, want ErrReference", err)
	}
}

func TestSecondActiveLicenseSigningKeyConflicts(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	first, err := storage.CreateLicenseSigningKey(ctx, db, org.ID, "kid-1", randomBytes(32), randomBytes(60))
	if err != nil {
		t.Fatal(err)
	}
	// Inside a transaction the conflict must leave the transaction usable, so the caller
	// can read the winner's key in it.
	err = storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := storage.CreateLicenseSigningKey(ctx, tx, org.ID, "kid-2", randomBytes(32), randomBytes(60)); !errors.Is(err, storage.ErrConflict) {
			t.Errorf("second active key: err = %v, want ErrConflict", err)
		}
		k, err := storage.ActiveLicenseSigningKey(ctx, tx, org.ID)
		if err == nil && k.ID != first.ID {
			t.Errorf("active key = %s, want %s", k.ID, first.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	other := newOrganization(t, db, "other")
	if _, err := storage.CreateLicenseSigningKey(ctx, db, other.ID, "kid-1", randomBytes(32), randomBytes(60)); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("a kid already used: err = %v, want ErrConflict", err)
	}
}

func TestConcurrentFirstSignersConverge(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	const signers = 8
	var wg sync.WaitGroup
	errs := make([]error, signers)
	for i := range signers {
		wg.Go(func() {
			_, errs[i] = storage.CreateLicenseSigningKey(ctx, db, org.ID, "kid-"+string(rune('a'+i)), randomBytes(32), randomBytes(60))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storage.ErrConflict):
			t.Errorf("err = %v, want nil or ErrConflict", err)
		}
	}
	if won != 1 {
		t.Errorf("%d signers created a key, want exactly 1", won)
	}
	if _, err := storage.ActiveLicenseSigningKey(ctx, db, org.ID); err != nil {
		t.Errorf("losers cannot read the winner's key: %v", err)
	}
}

func kids(keys []*storage.LicenseSigningKey) []string {
	out := []string{}
	for _, k := range keys {
		out = append(out, k.KeyID)
	}
	return out
}

func TestRetiredKeysStayPublishedUntilValidUntil(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	now := time.Now().UTC().Truncate(time.Microsecond)
	create := func(kid string) {
		t.Helper()
		if _, err := storage.CreateLicenseSigningKey(ctx, db, org.ID, kid, randomBytes(32), randomBytes(60)); err != nil {
			t.Fatal(err)
		}
	}
	retire := func(at, until time.Time, want int) {
		t.Helper()
		n, err := storage.RetireLicenseSigningKeys(ctx, db, org.ID, at, until)
		if err != nil || n != want {
			t.Fatalf("retire: %d, %v; want %d", n, err, want)
		}
	}
	create("k1")
	retire(now, now.Add(2*time.Hour), 1)
	create("k2")
	retire(now.Add(time.Hour), now.Add(3*time.Hour), 1)
	retire(now.Add(time.Hour), now.Add(3*time.Hour), 0) // nothing active any more
	create("k3")

	keys, err := storage.PublishedLicenseSigningKeys(ctx, db, org.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(kids(keys), "k1"); i < 0 || !keys[i].RetiredAt.Equal(now) || !keys[i].ValidUntil.Equal(now.Add(2*time.Hour)) {
		t.Errorf("published %v, want k1 retired at %s and valid until %s", kids(keys), now, now.Add(2*time.Hour))
	}
	tests := []struct {
		name string
		at   time.Time
		want []string
	}{
		{"while both retired keys may have live certificates", now.Add(time.Hour), []string{"k3", "k2", "k1"}},
		{"at k1's valid_until", now.Add(2 * time.Hour), []string{"k3", "k2"}},
		{"after every retired key's valid_until", now.Add(4 * time.Hour), []string{"k3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := storage.PublishedLicenseSigningKeys(ctx, db, org.ID, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if got := kids(keys); !slices.Equal(got, tc.want) {
				t.Errorf("published = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLicenseSigningKeysAreIsolatedByOrganization(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	a, b := newOrganization(t, db, "acme"), newOrganization(t, db, "bolt")
	for org, kid := range map[*storage.Organization]string{a: "a1", b: "b1"} {
		if _, err := storage.CreateLicenseSigningKey(ctx, db, org.ID, kid, randomBytes(32), randomBytes(60)); err != nil {
			t.Fatalf("%s: %v", kid, err)
		}
	}
	now := time.Now()
	if n, err := storage.RetireLicenseSigningKeys(ctx, db, a.ID, now, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("retire a: %d, %v", n, err)
	}
	if k, err := storage.ActiveLicenseSigningKey(ctx, db, b.ID); err != nil || k.KeyID != "b1" {
		t.Errorf("b's active key after retiring a's: %v, %v", k, err)
	}
	for org, want := range map[*storage.Organization][]string{a: {"a1"}, b: {"b1"}} {
		keys, err := storage.PublishedLicenseSigningKeys(ctx, db, org.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := kids(keys); !slices.Equal(got, want) {
			t.Errorf("%s publishes %v, want %v", org.Slug, got, want)
		}
	}
	if _, err := storage.ActiveLicenseSigningKey(ctx, db, a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a's active key after retirement: err = %v, want ErrNotFound", err)
	}
}

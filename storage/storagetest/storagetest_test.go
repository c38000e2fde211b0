package storagetest_test

import (
	"database/sql"
	"fmt"
	"os"
	"testing"

	_ "github.com/lib/pq"

	"till/storage/storagetest"
)

func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }

func TestNewGivesEachTestItsOwnMigratedDatabase(t *testing.T) {
	// Each parallel test inserts the same slug; with a shared database the unique index on
	// organizations(slug) or the row count would give it away.
	for i := range 4 {
		t.Run(fmt.Sprintf("parallel test %d", i), func(t *testing.T) {
			t.Parallel()
			db := storagetest.New(t)
			if _, err := db.Exec(`INSERT INTO organizations (name, slug) VALUES ('Acme', 'acme')`); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM organizations`); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("organizations has %d rows, want only this test's 1", n)
			}
		})
	}
}

func TestTwoDatabasesInOneTestAreIsolated(t *testing.T) {
	a, b := storagetest.New(t), storagetest.New(t)
	if _, err := a.Exec(`CREATE TABLE only_in_a (id int)`); err != nil {
		t.Fatal(err)
	}
	var nameA, nameB string
	var inB *string
	if err := a.Get(&nameA, `SELECT current_database()`); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(`SELECT current_database(), to_regclass('only_in_a')::text`).Scan(&nameB, &inB); err != nil {
		t.Fatal(err)
	}
	if nameA == nameB {
		t.Errorf("both pools use database %q", nameA)
	}
	if inB != nil {
		t.Error("a table created in one database is visible in the other")
	}
}

func TestDSNDatabaseIsDroppedAfterTheTest(t *testing.T) {
	var name string
	t.Run("a test that opens its own pool and leaves it open", func(t *testing.T) {
		db, err := sql.Open("postgres", storagetest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		// Deliberately not closed: the drop must disconnect it.
		var migrated bool
		if err := db.QueryRow(`SELECT current_database(), to_regclass('organizations') IS NOT NULL`).Scan(&name, &migrated); err != nil {
			t.Fatal(err)
		}
		if !migrated {
			t.Error("table organizations missing: the database is not migrated")
		}
	})
	var exists bool
	if err := storagetest.New(t).Get(&exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %q still exists after its test ended", name)
	}
}

package jobs_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

func TestMain(m *testing.M) {
	if dsn := os.Getenv(crashWorkerEnv); dsn != "" {
		os.Exit(runCrashWorker(dsn))
	}
	os.Exit(storagetest.Main(m))
}

// quiet drops worker logs; tests check outcomes in the database.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// effectsTable is where test handlers write their effect: one row per job, so a job whose
// effect committed twice fails its second attempt on the primary key.
const effectsTable = `CREATE TABLE job_effects (job_id uuid PRIMARY KEY, attempt int NOT NULL)`

func newDB(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	dsn := storagetest.DSN(t)
	db, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(effectsTable); err != nil {
		t.Fatal(err)
	}
	return db, dsn
}

// writeEffect is a handler's database effect.
func writeEffect(tx *sqlx.Tx, job *storage.Job) error {
	_, err := tx.Exec(`INSERT INTO job_effects (job_id, attempt) VALUES ($1, $2)`, job.ID, job.Attempt)
	return err
}

func effectAttempts(t *testing.T, db *sqlx.DB, id uuid.UUID) []int {
	t.Helper()
	var attempts []int
	if err := db.Select(&attempts, `SELECT attempt FROM job_effects WHERE job_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return attempts
}

func enqueue(t *testing.T, db sqlx.ExtContext, j storage.JobInsert) *storage.Job {
	t.Helper()
	job, _, err := storage.InsertJob(t.Context(), db, j)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func readJob(t *testing.T, db *sqlx.DB, id uuid.UUID) *storage.Job {
	t.Helper()
	job, err := storage.JobByID(t.Context(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

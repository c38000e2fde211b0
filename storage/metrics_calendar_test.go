package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lib/pq"

	"till/storage"
	"till/storage/storagetest"
)

// calendarSQL cuts each window into local days in PostgreSQL, as the series statement did
// before its calendar came from Go: the days that are not whole (run false) and the runs of
// whole days of one alignment (run true), per zone.
const calendarSQL = `WITH w AS (
		SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY w (zone, f, t, i)
	), days AS (
		SELECT i, start, stop, extract(hour FROM start AT TIME ZONE 'UTC')::smallint AS align,
			stop - start = interval '24 hours' AND start = date_trunc('hour', start, 'UTC') AS whole
		FROM w, LATERAL (SELECT CASE WHEN l = b.first THEN w.f ELSE l AT TIME ZONE w.zone END AS start,
				CASE WHEN l = b.last THEN w.t ELSE (l + interval '1 day') AT TIME ZONE w.zone END AS stop
			FROM (SELECT date_trunc('day', w.f AT TIME ZONE w.zone) AS first,
				date_trunc('day', (w.t - interval '1 microsecond') AT TIME ZONE w.zone) AS last) b,
				generate_series(b.first, b.last, interval '1 day') l) d
	)
	SELECT i, false AS run, 0::smallint AS align, start AS a, stop AS b FROM days WHERE NOT whole
	UNION ALL SELECT i, true, align, min(start), max(start)
	FROM (SELECT i, align, start, start - row_number() OVER (PARTITION BY i, align ORDER BY start) * interval '24 hours' AS run
		FROM days WHERE whole) r
	GROUP BY i, align, run
	ORDER BY 1, 2, 4`

type calendarRow struct {
	I     int       `db:"i"`
	Run   bool      `db:"run"`
	Align int16     `db:"align"`
	A     time.Time `db:"a"`
	B     time.Time `db:"b"`
}

// TestMetricsCalendarMatchesPostgreSQL compares the days Go cuts a window into with
// PostgreSQL's (of the zone PostgresZone names: PostgreSQL reads CET, EET, MET and WET as
// abbreviations of fixed offsets), for every zone both know over four years from local midnight to local
// midnight, and over seventy years (and a window from and to instants that are not
// midnights) for zones whose history is unusual: changes at midnight (Santiago, São Paulo
// until 2019, Havana, Beirut, Asuncion), a skipped day (Apia, 30 December 2011), offsets
// changed without daylight saving time (Moscow 2011 and 2014, Pyongyang 2015 and 2018), a
// half-hour change (Lord Howe), a two-hour one (Troll), Ramadan (Casablanca) and local mean
// time (Monrovia until 1972).
func TestMetricsCalendarMatchesPostgreSQL(t *testing.T) {
	ctx := context.Background()
	db := storagetest.New(t)
	var names []string
	if err := db.SelectContext(ctx, &names, `SELECT name FROM pg_timezone_names
		WHERE name NOT LIKE 'posix/%' AND name NOT LIKE 'right/%' ORDER BY name`); err != nil {
		t.Fatal(err)
	}
	type window struct {
		zone     string
		from, to time.Time
	}
	var windows []window
	for _, name := range names {
		loc, err := time.LoadLocation(name)
		if err != nil {
			continue
		}
		windows = append(windows, window{name, time.Date(2023, 1, 1, 0, 0, 0, 0, loc), time.Date(2027, 1, 1, 0, 0, 0, 0, loc)})
	}
	if len(windows) < 300 {
		t.Fatalf("only %d of PostgreSQL's %d zones load in Go", len(windows), len(names))
	}
	for _, name := range []string{"America/Santiago", "America/Sao_Paulo", "America/Havana", "Asia/Beirut",
		"America/Asuncion", "Pacific/Apia", "Europe/Moscow", "Asia/Pyongyang", "Australia/Lord_Howe",
		"Antarctica/Troll", "Africa/Casablanca", "Africa/Monrovia", "America/New_York", "Asia/Kolkata"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, window{name, time.Date(1970, 1, 1, 0, 0, 0, 0, loc), time.Date(2040, 1, 1, 0, 0, 0, 0, loc)},
			window{name, time.Date(2011, 3, 1, 7, 30, 0, 0, time.UTC), time.Date(2019, 11, 4, 3, 15, 0, 0, time.UTC)})
	}
	zones, froms, tos := make([]string, len(windows)), make([]time.Time, len(windows)), make([]time.Time, len(windows))
	for i, w := range windows {
		zones[i], froms[i], tos[i] = storage.PostgresZone(w.zone), w.from, w.to
	}
	var rows []calendarRow
	if err := db.SelectContext(ctx, &rows, calendarSQL, pq.Array(zones), pq.Array(froms), pq.Array(tos)); err != nil {
		t.Fatal(err)
	}
	want := make([][]calendarRow, len(windows))
	for _, r := range rows {
		want[r.I-1] = append(want[r.I-1], calendarRow{Run: r.Run, Align: r.Align, A: r.A.UTC(), B: r.B.UTC()})
	}
	parts := 0
	for i, w := range windows {
		loc, _ := time.LoadLocation(w.zone)
		var got []calendarRow
		p, runs := storage.MetricsCalendar(w.from, w.to, loc)
		for _, d := range p {
			got = append(got, calendarRow{A: d[0].UTC(), B: d[1].UTC()})
		}
		for _, r := range runs {
			got = append(got, calendarRow{Run: true, Align: r.Align, A: r.First.UTC(), B: r.Last.UTC()})
		}
		parts += len(p)
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Errorf("%s from %s to %s (-PostgreSQL +Go):\n%s", w.zone, w.from, w.to, diff)
		}
	}
	if parts < 1000 {
		t.Errorf("only %d days that are not whole: the windows cross too few changes", parts)
	}
}

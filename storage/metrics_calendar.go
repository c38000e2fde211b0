package storage

import (
	"time"

	"github.com/lib/pq"
)

// metricsCalendar is a window's local days as the daily sources read them (metricsFlowsDays,
// metricsDeltasDays): the days that are not whole, read from the hourly rollups, and the
// whole ones grouped into runs of consecutive days of one alignment, each read as one range
// of the daily rollups' key. A day is whole when it is 24 hours long and starts on a UTC
// hour; its alignment is that hour. A year in UTC is one run; a zone with daylight saving
// time has a run between each change and two days that are not whole.
//
// It is computed here rather than in the statement: cutting a year into days there converted
// each local midnight by the zone's name, several times a day, and grouped the days with a
// sort and a window, about a tenth of a year's read (bench/README.md). The days are
// PostgreSQL's own: pgAtZone converts local times as PostgreSQL does, and a test compares
// every zone's days with PostgreSQL's over years of transitions. Both read the zone database
// of the machine they run on (Go's time package and PostgreSQL built with the system's
// tzdata, as Debian's and the embedded cluster's are): a server whose zone data is another
// version than Till's can cut a recently changed zone's days differently.
type metricsCalendar struct {
	partStarts, partStops []time.Time
	runAligns             []int16
	runFirsts, runLasts   []time.Time
}

// metricsCalendarOf cuts [from, to) into the local days of loc: the first starts at from,
// the last ends at to, and the others start and end at local midnights.
func metricsCalendarOf(from, to time.Time, loc *time.Location) metricsCalendar {
	var c metricsCalendar
	first := localDate(from, loc)
	last := localDate(to.Add(-time.Microsecond), loc)
	// open[a] is the index of the run of alignment a that the next whole day of a continues.
	open := map[int16]int{}
	start := from
	for day := first; !day.After(last); day = day.AddDate(0, 0, 1) {
		stop := to
		if day.Before(last) {
			stop = pgAtZone(day.AddDate(0, 0, 1), loc)
		}
		if stop.Sub(start) != 24*time.Hour || !start.Equal(start.Truncate(time.Hour)) {
			c.partStarts, c.partStops = append(c.partStarts, start), append(c.partStops, stop)
			start = stop
			continue
		}
		align := int16(start.UTC().Hour())
		if i, ok := open[align]; ok && start.Sub(c.runLasts[i]) == 24*time.Hour {
			c.runLasts[i] = start
		} else {
			open[align] = len(c.runAligns)
			c.runAligns = append(c.runAligns, align)
			c.runFirsts, c.runLasts = append(c.runFirsts, start), append(c.runLasts, start)
		}
		start = stop
	}
	return c
}

// args are the calendar's statement arguments, $10 to $14 of the series statement.
func (c metricsCalendar) args() []any {
	return []any{pq.Array(c.partStarts), pq.Array(c.partStops), pq.Array(c.runAligns), pq.Array(c.runFirsts),
		pq.Array(c.runLasts)}
}

// localDate is the local date of t in loc as a UTC midnight: PostgreSQL's
// date_trunc('day', t AT TIME ZONE loc), a timestamp without time zone.
func localDate(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// LocalTime is the instant loc reads as local, a time without zone given as the UTC instant
// of the same reading, as PostgreSQL converts it (pgAtZone): callers that cut windows at
// local midnights agree with the periods PostgreSQL cuts.
func LocalTime(local time.Time, loc *time.Location) time.Time { return pgAtZone(local, loc) }

// pgAtZone is PostgreSQL's `local AT TIME ZONE loc` for a timestamp without time zone, given
// as the UTC instant of the same reading: the instant loc reads as local. A reading that
// loc skips (a gap as clocks spring forward) or reads twice (as they fall back) is resolved
// as PostgreSQL's DetermineTimeZoneOffset does: it finds the first transition after a day
// before the reading, tries the offsets before and after it, and in a gap or an overlap
// takes the later instant (the offset before a spring forward, after a fall back).
func pgAtZone(local time.Time, loc *time.Location) time.Time {
	t := local.Unix()
	prev := time.Unix(t-24*60*60, 0).In(loc)
	_, before := prev.Zone()
	_, boundary := prev.ZoneBounds()
	if boundary.IsZero() {
		return time.Unix(t-int64(before), 0).UTC()
	}
	_, after := boundary.Zone()
	b := boundary.Unix()
	beforeTime, afterTime := t-int64(before), t-int64(after)
	switch {
	case beforeTime < b && afterTime < b:
		return time.Unix(beforeTime, 0).UTC()
	case beforeTime >= b && afterTime >= b:
		return time.Unix(afterTime, 0).UTC()
	}
	return time.Unix(max(beforeTime, afterTime), 0).UTC()
}

// PostgresZone is the name PostgreSQL reads as the IANA zone name: PostgreSQL looks a zone
// name up among its time zone abbreviations first, and four zone names are also
// abbreviations of fixed offsets there (CET is UTC+1 all year to PostgreSQL, and has summer
// time to the zone database, to Go and to upstream). They are given as the zones tzdata links
// them to since 2024b, whose offsets are theirs since 1997 (Lisbon kept Central European time
// until 1996). The other zone names that are abbreviations (EST, MST, HST, UTC, GMT, UCT,
// Zulu) have the abbreviation's fixed offset in both.
func PostgresZone(name string) string {
	switch name {
	case "CET", "MET":
		return "Europe/Brussels"
	case "EET":
		return "Europe/Athens"
	case "WET":
		return "Europe/Lisbon"
	}
	return name
}

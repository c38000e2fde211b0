package fastapi

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// pydantic parses date-times with the speedate crate. A string that is not a
// date-time is retried as a date (lax mode), and the date parser's complaint
// becomes the 422 message: "Input should be a valid datetime or date, input
// is too short". This file accepts the RFC 3339 shapes speedate accepts and
// reproduces the date parser's error texts.

// parsedTime is a validated date-time; aware tells whether it had an offset.
type parsedTime struct {
	t     time.Time
	aware bool
	year  int // as written; Python's datetime cannot hold year 0
}

// parseSpeedateDateTime parses s as DateTime::parse_str, falling back to a
// plain date at midnight; errText is the date parser's error otherwise.
func parseSpeedateDateTime(s string) (parsedTime, string) {
	if pt, ok := parseRFC3339ish(s); ok {
		return pt, ""
	}
	if pt, ok := parseTimestampString(s); ok {
		return pt, ""
	}
	y, m, d, errText := parseSpeedateDate(s)
	if errText == "" && len(s) == 10 {
		return parsedTime{t: time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), year: y}, ""
	}
	if errText == "" {
		errText = "unexpected extra characters at the end of the input"
	}
	return parsedTime{}, errText
}

// parseSpeedateDate is Date::parse_bytes_partial's checks, in its order.
func parseSpeedateDate(s string) (y, m, d int, errText string) {
	if len(s) < 10 {
		return 0, 0, 0, "input is too short"
	}
	digits := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	var ok bool
	if y, ok = digits(0, 4); !ok {
		return 0, 0, 0, "invalid character in year"
	}
	if s[4] != '-' {
		return 0, 0, 0, "invalid date separator, expected `-`"
	}
	if m, ok = digits(5, 7); !ok {
		return 0, 0, 0, "invalid character in month"
	}
	if s[7] != '-' {
		return 0, 0, 0, "invalid date separator, expected `-`"
	}
	if d, ok = digits(8, 10); !ok {
		return 0, 0, 0, "invalid character in day"
	}
	if m < 1 || m > 12 {
		return 0, 0, 0, "month value is outside expected range of 1-12"
	}
	if d < 1 || d > daysIn(y, m) {
		return 0, 0, 0, "day value is outside expected range"
	}
	return y, m, d, ""
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseRFC3339ish accepts YYYY-MM-DD[T t _ ' ']HH:MM[:SS[(.|,)frac]][Z|z|±HH[:]MM].
func parseRFC3339ish(s string) (parsedTime, bool) {
	y, m, d, errText := parseSpeedateDate(s)
	if errText != "" || len(s) < 16 {
		return parsedTime{}, false
	}
	switch s[10] {
	case 'T', 't', '_', ' ':
	default:
		return parsedTime{}, false
	}
	rest := s[11:]
	num2 := func(str string) (int, bool) {
		if len(str) < 2 || !isDigit(str[0]) || !isDigit(str[1]) {
			return 0, false
		}
		return int(str[0]-'0')*10 + int(str[1]-'0'), true
	}
	hh, ok1 := num2(rest)
	if !ok1 || len(rest) < 5 || rest[2] != ':' {
		return parsedTime{}, false
	}
	mm, ok2 := num2(rest[3:])
	if !ok2 || hh > 23 || mm > 59 {
		return parsedTime{}, false
	}
	rest = rest[5:]
	ss, nanos := 0, 0
	if strings.HasPrefix(rest, ":") {
		var ok bool
		if ss, ok = num2(rest[1:]); !ok || ss > 59 {
			return parsedTime{}, false
		}
		rest = rest[3:]
		if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
			n := 1
			for n < len(rest) && isDigit(rest[n]) {
				n++
			}
			if n == 1 {
				return parsedTime{}, false
			}
			frac := rest[1:n]
			if len(frac) > 6 {
				frac = frac[:6] // microsecond precision, extra digits truncated
			}
			us, _ := strconv.Atoi(frac + strings.Repeat("0", 6-len(frac)))
			nanos = us * 1000
			rest = rest[n:]
		}
	}
	pt := parsedTime{year: y}
	loc := time.UTC
	switch {
	case rest == "":
	case rest == "Z" || rest == "z":
		pt.aware = true
	case rest[0] == '+' || rest[0] == '-':
		oh, ok := num2(rest[1:])
		if !ok {
			return parsedTime{}, false
		}
		tail := rest[3:]
		tail = strings.TrimPrefix(tail, ":")
		om, ok := num2(tail)
		if !ok || len(tail) != 2 || oh > 23 || om > 59 {
			return parsedTime{}, false
		}
		off := oh*3600 + om*60
		if rest[0] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
		pt.aware = true
	default:
		return parsedTime{}, false
	}
	pt.t = time.Date(y, time.Month(m), d, hh, mm, ss, nanos, loc).UTC()
	return pt, true
}

// parseTimestampString accepts a number as Unix seconds (or milliseconds
// beyond 2e10), as speedate's float_parse_bytes fallback does.
func parseTimestampString(s string) (parsedTime, bool) {
	if s == "" || strings.ContainsAny(s, "eExXpP_ \t\n") {
		return parsedTime{}, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return parsedTime{}, false
	}
	return timestampTime(f)
}

func timestampTime(f float64) (parsedTime, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return parsedTime{}, false
	}
	if math.Abs(f) > 2e10 {
		f /= 1000
	}
	if math.Abs(f) > 1e14 {
		return parsedTime{}, false
	}
	sec, frac := math.Modf(f)
	t := time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC()
	return parsedTime{t: t, aware: true, year: t.Year()}, true
}

// formatTime renders a date-time for GraphQL in UTC with a Z suffix and
// microseconds only when non-zero, as upstream serialises them.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999Z")
}

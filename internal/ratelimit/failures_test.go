package ratelimit_test

import (
	"testing"
	"time"

	"till/internal/ratelimit"
)

func TestFailures(t *testing.T) {
	type step struct {
		at      time.Duration // offset from the test's start
		key     string
		fail    bool // count a failure after the check
		refused bool
		retry   time.Duration
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"a key is refused once it has failed max times, until its window ends", []step{
			{0, "a", true, false, 0}, {time.Second, "a", true, false, 0},
			{2 * time.Second, "a", false, true, 58 * time.Second},
			{59 * time.Second, "a", false, true, time.Second},
			{time.Minute, "a", false, false, 0},
		}},
		{"successes are neither counted nor refused", []step{
			{0, "a", false, false, 0}, {0, "a", false, false, 0}, {0, "a", false, false, 0},
			{0, "a", true, false, 0}, {0, "a", false, false, 0},
		}},
		{"one key's failures leave another key alone", []step{
			{0, "a", true, false, 0}, {0, "a", true, false, 0},
			{0, "a", false, true, time.Minute},
			{0, "b", false, false, 0},
		}},
		{"a new window starts afresh", []step{
			{0, "a", true, false, 0}, {0, "a", true, false, 0},
			{time.Minute, "a", true, false, 0},
			{time.Minute + time.Second, "a", false, false, 0},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ratelimit.NewFailures(2, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i, s := range tt.steps {
				refused, retry := f.Refused(s.key, start.Add(s.at))
				if refused != s.refused || retry != s.retry {
					t.Fatalf("step %d: Refused(%s) = %v, %s; want %v, %s", i, s.key, refused, retry, s.refused, s.retry)
				}
				if s.fail {
					f.Fail(s.key, start.Add(s.at))
				}
			}
		})
	}
	t.Run("a non-positive maximum is refused", func(t *testing.T) {
		if _, err := ratelimit.NewFailures(0, time.Minute); err == nil {
			t.Error("NewFailures(0) succeeded")
		}
	})
}

package ttlcache

import (
	"sync"
	"testing"
	"time"
)

func TestCacheExpiresAndForgets(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at       time.Duration // clock after t0
		op       string        // put, forget or get
		notAfter time.Duration // put's bound after t0; 0 for none
		want     bool          // get's hit
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"hit within ttl, miss from ttl on", []step{{0, "put", 0, false}, {4 * time.Second, "get", 0, true}, {5 * time.Second, "get", 0, false}}},
		{"never past notAfter", []step{{0, "put", 2 * time.Second, false}, {time.Second, "get", 0, true}, {2 * time.Second, "get", 0, false}}},
		{"a later notAfter does not extend the ttl", []step{{0, "put", time.Hour, false}, {5 * time.Second, "get", 0, false}}},
		{"forget drops at once", []step{{0, "put", 0, false}, {0, "forget", 0, false}, {0, "get", 0, false}}},
		{"missing key", []step{{0, "get", 0, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now time.Time
			c := New[string, int](5*time.Second, 10, func() time.Time { return now })
			for i, s := range tt.steps {
				now = t0.Add(s.at)
				switch s.op {
				case "put":
					var bound time.Time
					if s.notAfter != 0 {
						bound = t0.Add(s.notAfter)
					}
					c.Put("k", 7, bound)
				case "forget":
					c.Forget("k")
				case "get":
					v, ok := c.Get("k")
					if ok != s.want || (ok && v != 7) {
						t.Errorf("step %d: Get = %d, %v; want hit %v", i, v, ok, s.want)
					}
				}
			}
		})
	}
}

func TestNilCacheCachesNothing(t *testing.T) {
	var c *Cache[string, int]
	c.Put("k", 1, time.Time{})
	c.Forget("k")
	if _, ok := c.Get("k"); ok {
		t.Error("a nil cache answered a Get")
	}
}

func TestCacheStaysBoundedAndSafeUnderConcurrency(t *testing.T) {
	const limit, keys, workers = 1000, 1500, 50
	c := New[int, int](time.Minute, limit, time.Now)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < keys; i += workers {
				c.Put(i, i*2, time.Time{})
				if v, ok := c.Get(i); ok && v != i*2 {
					t.Errorf("key %d holds %d", i, v)
				}
				if i%7 == 0 {
					c.Forget(i)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(c.entries); n > limit {
		t.Errorf("cache holds %d entries, limit %d", n, limit)
	}
	c.Put(keys, 1, time.Time{})
	if v, ok := c.Get(keys); !ok || v != 1 {
		t.Errorf("a full cache still takes new keys: Get = %d, %v", v, ok)
	}
}

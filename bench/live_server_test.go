package bench

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// orgTokens makes n organization tokens with every scope through `till token create`.
func (s *tillServer) orgTokens(b *testing.B, org string, n int) []string {
	b.Helper()
	line := regexp.MustCompile(`(?m)^(till_oat_[A-Za-z0-9]+)$`)
	tokens := make([]string, n)
	for i := range tokens {
		cmd := exec.Command(s.bin, "token", "create", "--org", org, "--scopes", "all", "--comment", fmt.Sprintf("live benchmark %d", i))
		cmd.Env, cmd.Dir = s.env, s.dataDir
		out, err := cmd.CombinedOutput()
		m := line.FindSubmatch(out)
		if err != nil || m == nil {
			b.Fatalf("till token create: %v\n%s", err, out)
		}
		tokens[i] = string(m[1])
	}
	return tokens
}

// liveMemory is the server's memory at one moment.
type liveMemory struct {
	rss, heap, goroutines float64 // bytes, bytes, count
}

// liveMemoryGrowth is the memory before and after opening subs subscribers.
type liveMemoryGrowth struct {
	before, after liveMemory
	subs          int
}

// perSub is the growth per subscriber.
func (g *liveMemoryGrowth) perSub() liveMemory {
	n := float64(g.subs)
	return liveMemory{rss: (g.after.rss - g.before.rss) / n, heap: (g.after.heap - g.before.heap) / n,
		goroutines: (g.after.goroutines - g.before.goroutines) / n}
}

// memory collects the server's garbage and reads its resident set, live heap and goroutines.
func (lb *liveBench) memory(b *testing.B) liveMemory {
	b.Helper()
	get := func(path string) string {
		resp, err := http.Get(lb.metrics + path)
		if err != nil {
			b.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(body)
	}
	get("/debug/pprof/heap?gc=1")
	var m liveMemory
	for _, line := range strings.Split(get("/metrics"), "\n") {
		name, value, _ := strings.Cut(line, " ")
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_memstats_heap_alloc_bytes":
			m.heap = v
		case "go_goroutines":
			m.goroutines = v
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", lb.procs.till))
	if err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				var kb float64
				if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kb); err == nil {
					m.rss = kb * 1024
				}
			}
		}
	}
	return m
}

// profile saves a CPU profile of the server over the benchmark's duration as
// $BENCH_LIVE_PROFILE/<name>.pprof when that directory is set; the channel is closed when
// it is written (at once when profiling is off).
func (lb *liveBench) profile(b *testing.B, name string) <-chan struct{} {
	b.Helper()
	done := make(chan struct{})
	dir := os.Getenv("BENCH_LIVE_PROFILE")
	if dir == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", lb.metrics, int(lb.duration.Seconds())))
		if err != nil {
			b.Errorf("profiling: %v", err)
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".pprof"), raw, 0o644)
		}
		if err != nil {
			b.Errorf("profiling: %v", err)
		}
	}()
	return done
}

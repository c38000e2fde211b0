package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc; it is 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// processes names what the CPU split is taken over: this process (the load generator, and
// the ceiling endpoint while it runs), the till server and its descendants (PostgreSQL).
type processes struct {
	till int
}

// cpuSample is one reading of /proc: CPU ticks per process and for the whole machine.
type cpuSample struct {
	ok          bool
	at          time.Time
	bench, till float64
	pg          map[int]float64
	busy, total float64
}

// cpuUse is CPU consumed over a window, in cores (CPU seconds per second), and the share of
// the machine's capacity that was busy. ok is false where /proc is unavailable.
type cpuUse struct {
	ok              bool
	bench, till, pg float64
	busy            float64
}

// sample reads the CPU times of this process, the till server, its descendants and the machine.
func (p processes) sample() cpuSample {
	s := cpuSample{at: time.Now(), pg: map[int]float64{}}
	self, _, ok := readStat("/proc/self/stat")
	if !ok {
		return s
	}
	s.bench = self
	children := map[int][]int{}
	ticks := map[int]float64{}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err != nil {
			continue
		}
		if t, ppid, ok := readStat(path); ok {
			ticks[pid] = t
			children[ppid] = append(children[ppid], pid)
		}
	}
	s.till = ticks[p.till]
	for queue := children[p.till]; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		s.pg[pid] = ticks[pid]
		queue = append(queue, children[pid]...)
	}
	s.busy, s.total, s.ok = machineTicks()
	return s
}

// since is the CPU used from s to later. Processes that exited in between are left out and
// ones that started are counted whole, so the split never goes negative.
func (s cpuSample) since(later cpuSample) cpuUse {
	wall := later.at.Sub(s.at).Seconds()
	if !s.ok || !later.ok || wall <= 0 {
		return cpuUse{}
	}
	var pg float64
	for pid, t := range later.pg {
		pg += t - s.pg[pid]
	}
	u := cpuUse{ok: true, bench: (later.bench - s.bench) / clockTicks / wall,
		till: (later.till - s.till) / clockTicks / wall, pg: pg / clockTicks / wall}
	if total := later.total - s.total; total > 0 {
		u.busy = (later.busy - s.busy) / total
	}
	return u
}

// readStat returns a process's user plus system CPU ticks and its parent's pid from
// /proc/PID/stat. The command name may hold spaces and parentheses, so fields are counted
// from the last ')'.
func readStat(path string) (ticks float64, ppid int, ok bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(raw[i+1:]))
	// After the name: state, ppid, ... utime is field 14 and stime field 15 of the whole line.
	if len(f) < 13 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseFloat(f[11], 64)
	stime, err3 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, false
	}
	return utime + stime, ppid, true
}

// machineTicks reads the busy and total ticks of all CPUs from /proc/stat; idle and iowait
// count as not busy.
func machineTicks() (busy, total float64, ok bool) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		if i >= 8 { // guest times are already inside user and nice
			break
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}

// peakRSSLine reports a process's peak resident memory (VmHWM in /proc/PID/status), the
// price of the server's garbage-collection setting; empty where /proc is unavailable.
func peakRSSLine(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return fmt.Sprintf("\ntill serve peak RSS: %d MiB", kb/1024)
			}
		}
	}
	return ""
}

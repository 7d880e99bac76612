package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

// The replay phase: what `vkwatch replay` holds and how fast it answers on
// long recordings. The recordings are made here, in a temporary directory,
// from the real busy recording in source/record/testdata (two servers under
// writers with a BGSAVE, at 200 ms) laid onto six servers at the interval
// asked, through the recording writer: every sample a whole real one.

// synthRecording is one recording the phase makes.
type synthRecording struct {
	name     string
	servers  int
	interval time.Duration
	span     time.Duration
}

var replayRecordings = []synthRecording{
	{"6 servers at 10 ms, 1 minute", 6, 10 * time.Millisecond, time.Minute},
	{"6 servers at 10 ms, 30 minutes", 6, 10 * time.Millisecond, 30 * time.Minute},
	{"6 servers at 200 ms, 24 hours", 6, 200 * time.Millisecond, 24 * time.Hour},
}

// runReplay makes the recordings and replays each in a 200x50 terminal:
// the time to the first frame, RSS after `end`, and a seek (g to the
// middle) on the 24-hour one.
func runReplay(ctx context.Context, cfg config, dir string) ([]check, error) {
	var rss []int64
	var checks []check
	if cfg.replayTo != "" {
		dir = cfg.replayTo
	}
	for _, r := range replayRecordings {
		path := filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "").Replace(r.name)+".jsonl.zst")
		if _, err := os.Stat(path); err != nil {
			t0 := time.Now()
			n, err := makeRecording(path, r)
			if err != nil {
				return checks, err
			}
			fmt.Fprintf(cfg.out, "%s: %d samples, made in %s\n", r.name, n, time.Since(t0).Round(time.Second))
		}
		m, err := replayMeasure(ctx, cfg, path, r.span)
		if err != nil {
			return checks, err
		}
		fmt.Fprintf(cfg.out, "  first frame %s, RSS after end %.1f MiB, seek to the middle %s\n", m.first.Round(time.Millisecond), mib(m.rss), m.seek.Round(time.Millisecond))
		rss = append(rss, m.rss)
		if r.span == 24*time.Hour {
			checks = append(checks,
				check{"Replay, 24 h recording: first frame <= 1 s", m.first.Round(time.Millisecond).String(), verdict(m.first <= time.Second)},
				check{"Replay, 24 h recording: a seek <= 300 ms", m.seek.Round(time.Millisecond).String(), verdict(m.seek <= 300*time.Millisecond)})
		}
	}
	ratio := float64(rss[1]) / float64(rss[0])
	checks = append(checks,
		check{"Replay RSS after end, 30 min / 1 min recording (6 servers at 10 ms) <= 1.3x", fmt.Sprintf("%.2fx (%.1f / %.1f MiB)", ratio, mib(rss[1]), mib(rss[0])), verdict(ratio <= 1.3)},
		check{"Replay RSS after end <= 100 MB", fmt.Sprintf("%.1f MB at most", float64(max(rss[0], rss[1], rss[2]))/1e6), verdict(max(rss[0], rss[1], rss[2]) <= 100e6)})
	return checks, nil
}

// makeRecording writes r to path and returns its number of samples.
func makeRecording(path string, r synthRecording) (int, error) {
	real, err := record.ReadFile(filepath.Join("source", "record", "testdata", "busy-two-servers.jsonl.zst"))
	if err != nil {
		return 0, fmt.Errorf("the real recording to lay out (run vkperf from the repository's root): %w", err)
	}
	var samples []*source.Sample
	for _, ev := range real.Events {
		if ev.Kind == source.EventSample {
			samples = append(samples, ev.Sample)
		}
	}
	h := real.Header
	h.Settings = map[string]string{"interval": r.interval.String(), "idle_interval": "0s", "history": "10s"}
	h.Servers = nil
	for i := range r.servers {
		id := source.NodeID(fmt.Sprintf("10.0.0.%d:6379", i+1))
		h.Servers = append(h.Servers, record.ServerInfo{Node: id, Addr: string(id), Identity: &source.Identity{Addr: string(id), ServerName: "valkey", Version: "8.1.1", Role: "master"}})
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w, err := record.NewWriter(f, h, record.Options{Compression: record.Zstd})
	if err != nil {
		return 0, err
	}
	n := 0
	for k := 0; time.Duration(k)*r.interval < r.span; k++ {
		for i, si := range h.Servers {
			s := *samples[(k*r.servers+i)%len(samples)]
			s.Seq = uint64(k)
			off := time.Duration(k)*r.interval + time.Duration(i)*time.Microsecond
			if err := w.Write(source.Event{Node: si.Node, Kind: source.EventSample, Offset: off, Sample: &s}); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, w.Close()
}

// replayMetrics are one replay's figures.
type replayMetrics struct {
	first, seek time.Duration
	rss         int64
}

// replayMeasure replays path in a terminal: the first frame (the status
// line with the recording's length), `end` and its RSS once it has landed,
// then g to the middle and the time until it has landed.
func replayMeasure(ctx context.Context, cfg config, path string, span time.Duration) (replayMetrics, error) {
	var m replayMetrics
	start := time.Now()
	screen := &screenTail{}
	a, err := startInPTYSeen("vkwatch replay", screen.add, cfg.vkwatch, "replay", path)
	if err != nil {
		return m, err
	}
	defer a.stop()
	landed := func(what string) func() (bool, error) {
		return func() (bool, error) { return screen.has(what) && screen.after(what, "▶", "❚❚", "■"), nil }
	}
	length := fmtClock(span - time.Microsecond*6)
	if err := waitUntil(ctx, "the first frame", 30*time.Second, landed(" / "+length)); err != nil {
		return m, err
	}
	m.first = time.Since(start)
	screen.reset()
	a.ptmx.Write([]byte("\x1b[F")) // end
	if err := waitUntil(ctx, "the end", 30*time.Second, func() (bool, error) { return screen.has("■ end"), nil }); err != nil {
		return m, err
	}
	// What the end's seek read is in, and read ahead: RSS is taken once
	// it has settled (a measurement's pause, not a test's).
	time.Sleep(2 * time.Second)
	if m.rss, err = vmRSS(a.pid()); err != nil {
		return m, err
	}
	screen.reset()
	mid := span / 2
	sent := time.Now()
	for _, k := range []string{"g", fmt.Sprintf("+%ds", int(mid.Seconds())), "\r"} {
		a.ptmx.Write([]byte(k)) // each its own key press
		time.Sleep(50 * time.Millisecond)
	}
	if err := waitUntil(ctx, "the seek", 30*time.Second, landed("replay "+fmtClock(mid)+" / ")); err != nil {
		return m, err
	}
	m.seek = time.Since(sent)
	return m, nil
}

// fmtClock is the replay's status line clock: m:ss, h:mm:ss past an hour.
func fmtClock(d time.Duration) string {
	d = d.Truncate(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%d:%02d:%02d", d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second)
	}
	return fmt.Sprintf("%d:%02d", d/time.Minute, (d%time.Minute)/time.Second)
}

// vmRSS is a process's resident set, from /proc.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			var kb int64
			_, err := fmt.Sscan(f[1], &kb)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// screenTail keeps what a program drew since the last reset (its last
// 256 KiB).
type screenTail struct {
	mu  sync.Mutex
	buf []byte
}

func (s *screenTail) add(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if n := len(s.buf); n > 256<<10 {
		s.buf = append(s.buf[:0], s.buf[n-128<<10:]...)
	}
}

func (s *screenTail) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = s.buf[:0]
}

func (s *screenTail) has(what string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(string(s.buf), what)
}

// after reports whether one of marks was drawn after the last what.
func (s *screenTail) after(what string, marks ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := string(s.buf)
	i := strings.LastIndex(buf, what)
	if i < 0 {
		return false
	}
	for _, m := range marks {
		if strings.Contains(buf[i:], m) {
			return true
		}
	}
	return false
}

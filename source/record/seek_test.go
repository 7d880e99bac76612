package record

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// realSeekServers and realSeekSamples: the size of TestRealRecordingSeeks,
// real servers watched at 10 ms until the recording holds that many
// samples (README, "Compressed recordings", for what it costs).
const (
	realSeekServers = 20
	realSeekSamples = 100_000
)

// TestRealRecordingSeeks: real servers watched at a 10 ms interval and
// recorded through two Writers at once, as .zst and as .gz (frames of 1 s,
// so that a seek has marks to land on), until the recordings hold
// realSeekSamples samples: the two hold the same lines. Each, reopened, is
// indexed from its trailer, and a seek to each of many times starts within
// a frame before the time and reads from there the very events the whole
// read has, skipping only a node's deltas before its first whole sample,
// to past the time. Then each file cut short at about two thirds (as by a
// kill -9): it opens by finding its frames without a trailer, to the same
// marks, says it was cut short, ends past the middle, and seeks the same
// up to the cut. The whole read is one, of the .zst, for all the seeks.
func TestRealRecordingSeeks(t *testing.T) {
	defer func(d time.Duration) { frameEvery = d }(frameEvery)
	frameEvery = time.Second
	dir := t.TempDir()
	paths := map[Compression]string{Zstd: filepath.Join(dir, "real.jsonl.zst"), Gzip: filepath.Join(dir, "real.jsonl.gz")}
	gap, silence := recordReal(t, paths, realSeekServers, realSeekSamples)
	if z, g := contentHash(t, paths[Zstd]), contentHash(t, paths[Gzip]); z != g {
		t.Fatalf("the .zst and the .gz recordings of the same events differ once decompressed")
	}
	var seeks []seekCheck
	var whole *File
	for _, c := range []Compression{Zstd, Gzip} {
		path := paths[c]
		rf, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer rf.Close()
		marks, ok := rf.readTrailer()
		if !ok || rf.Truncated || !reflect.DeepEqual(marks, rf.Marks) {
			t.Fatalf("%s: the recording has no trailer a reader takes (truncated %v: %s)", c, rf.Truncated, rf.Why)
		}
		if c == Zstd {
			whole = rf
		}
		t.Logf("%s: %d bytes, %d marks, %s..%s", c, rf.size, len(rf.Marks), rf.Start, rf.End)
		const n = 6
		for i := range n {
			seeks = append(seeks, seekCheck{rf: rf, target: rf.Start + time.Duration((float64(i)+0.5)/n*float64(rf.End-rf.Start))})
		}
		seeks = append(seeks, seekCheck{rf: rf, target: rf.End - 300*time.Millisecond})

		// Cut short at about two thirds, inside a frame.
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cut := len(data) * 2 / 3
		cutPath := filepath.Join(dir, "cut-"+filepath.Base(path))
		if err := os.WriteFile(cutPath, data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		cf, err := OpenFile(cutPath)
		if err != nil {
			t.Fatal(err)
		}
		defer cf.Close()
		before := marksWhole(c, data, marks, cut)
		if !cf.Truncated || !strings.Contains(cf.Why, "compressed frame") || !reflect.DeepEqual(cf.Marks, before) {
			t.Fatalf("%s cut at %d of %d: truncated %v (%s), %d marks, want the %d whole before the cut", c, cut, len(data), cf.Truncated, cf.Why, len(cf.Marks), len(before))
		}
		if cf.End < rf.Start+(rf.End-rf.Start)/2 || cf.End > rf.End {
			t.Fatalf("%s cut at %d of %d: it ends at %s of %s..%s", c, cut, len(data), cf.End, rf.Start, rf.End)
		}
		// Each at least a whole sample of every node before the cut (which
		// the scan reads to its end): the last near the cut.
		near := cf.End - fullEvery - 2*time.Second
		for _, frac := range []float64{0.2, 0.6, 1} {
			seeks = append(seeks, seekCheck{rf: cf, cut: true, target: min(near, cf.Start+time.Duration(frac*float64(cf.End-cf.Start)))})
		}
	}
	if n := checkSeeks(t, whole, seeks, gap, silence); n < realSeekSamples {
		t.Fatalf("%d samples read back, want %d", n, realSeekSamples)
	}
}

// lastMarkAtOrBefore is the time of the last of marks at or before t,
// as a list (not the File's own lookup): where a seek to t must start.
func lastMarkAtOrBefore(marks []Mark, t time.Duration) time.Duration {
	at := time.Duration(-1)
	for _, m := range marks {
		if m.T <= t {
			at = max(at, m.T)
		}
	}
	return at
}

// contentHash is the SHA-256 of the recording at path, decompressed.
func contentHash(t *testing.T, path string) [32]byte {
	h := sha256.New()
	readDecompressed(t, path, func(r io.Reader) {
		if _, err := io.Copy(h, r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	})
	return [32]byte(h.Sum(nil))
}

// recordReal watches servers real servers at 10 ms and records them to
// each of paths at once (by its compression), until samples samples are
// written. It returns the longest time between two successive samples of
// a node (gap: a node's whole sample comes at its first sample fullEvery
// after its last, so up to that much later under load), and the longest
// stretch of the recording's clock that no event written came from
// (silence: a frame starts only at an event, so across such a stretch
// two marks are further apart than a frame).
func recordReal(t *testing.T, paths map[Compression]string, servers, samples int) (gap, silence time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	clock := source.NewClock()
	h := Header{VKWatch: "test", Epoch: clock.Epoch(), Settings: map[string]string{"interval": "10ms"}}
	var watchers []*watch.Watcher
	for range servers {
		s := servertest.StartDefault(t)
		ep := sourcetest.Endpoint(t, s.Addr)
		w := watch.New(ep.Node(), ep, clock, watch.Config{Interval: 10 * time.Millisecond, PingInterval: 5 * time.Millisecond})
		defer w.Close()
		id, err := w.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h.Servers = append(h.Servers, ServerInfo{Node: ep.Node(), Addr: ep.String(), Identity: &id})
		watchers = append(watchers, w)
	}
	var writers []*Writer
	for c, path := range paths {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rw, err := NewCompressedWriter(f, "jsonl", c, h)
		if err != nil {
			t.Fatal(err)
		}
		writers = append(writers, rw)
	}
	// One lock around both writes: the two files hold the events in the
	// same order.
	var mu sync.Mutex
	last := map[source.NodeID]time.Duration{}
	latest := time.Duration(-1) // the latest offset written
	var written atomic.Int64
	enough := make(chan struct{})
	var once sync.Once
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	start := time.Now()
	for _, w := range watchers {
		wg.Go(func() {
			w.Run(runCtx, func(ev source.Event) {
				mu.Lock()
				if ev.Kind == source.EventSample {
					if at, ok := last[ev.Node]; ok {
						gap = max(gap, ev.Offset-at)
					}
					last[ev.Node] = ev.Offset
				}
				if ev.Offset > latest {
					if latest >= 0 {
						silence = max(silence, ev.Offset-latest)
					}
					latest = ev.Offset
				}
				for _, rw := range writers {
					if err := rw.Write(ev); err != nil {
						t.Errorf("write: %v", err)
					}
				}
				mu.Unlock()
				if ev.Kind == source.EventSample && written.Add(1) >= int64(samples) {
					once.Do(func() { close(enough) })
				}
			})
		})
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatalf("%d samples of %d within the deadline", written.Load(), samples)
	}
	stop()
	wg.Wait()
	for _, rw := range writers {
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	t.Logf("%d servers at 10ms: %d samples in %s (%.0f a second, %.0f a server-second), a node's samples at most %s apart, no event for at most %s",
		servers, written.Load(), took.Round(time.Millisecond), float64(written.Load())/took.Seconds(), float64(written.Load())/took.Seconds()/float64(servers), gap, silence)
	return gap, silence
}

// seekCheck is one seek of checkSeeks: its scan, checked against the whole
// read as both go.
type seekCheck struct {
	rf            *File
	target, start time.Duration
	cut           bool // rf is the whole read's file cut short: its scan ends early
	sc            *Scanner
	next          *source.Event // the scan's next event, nil once it ended
	read, stop    time.Duration // how far the scan has read, and reads
	matched       int
	eof           bool                   // the scan read to the recording's end
	based         map[source.NodeID]bool // the nodes whose whole sample the scan has read
	// late is how long after start+fullEvery a node's whole sample may
	// come: a second, or the longest gap between a node's samples.
	late time.Duration
	err  error
}

// skippable: what the scan may not read of the whole read: a node's
// deltas before its first whole sample after the mark.
func (s *seekCheck) skippable(ev source.Event) bool {
	return ev.Kind == source.EventSample && !s.based[ev.Node] && ev.Offset <= s.start+fullEvery+s.late
}

func (s *seekCheck) advance() {
	s.next = nil
	if s.sc.Next() {
		ev := s.sc.Event()
		if ev.Offset <= s.stop {
			s.next = &ev
		}
	} else {
		s.eof, s.err = true, s.sc.Err()
	}
}

// note keeps what a matched event says of the scan.
func (s *seekCheck) note(ev source.Event) {
	if ev.Kind == source.EventSample {
		s.based[ev.Node] = true
	}
	s.read = max(s.read, ev.Offset)
	s.matched++
}

// checkSeeks makes each of seeks and checks its scan against the whole
// read of whole, in one pass of it (the recording need not fit in memory):
// each scan starts at the last frame mark before its target, at most a
// frame (and a second of slack, or the recording's longest silence, when
// no event came for longer: a starved process records nothing) before
// it, and reads the whole read's
// events from its first on, in order, skipping only a node's deltas before
// its first whole sample, until a second past the target and past every
// node's next whole sample (or its file's end). A node's whole sample
// comes at its first sample fullEvery after its last one: within a second
// of that, or within gap, the longest time between two of a node's
// samples while it was recorded. It returns the number of samples in the
// whole read.
func checkSeeks(t *testing.T, whole *File, seeks []seekCheck, gap, silence time.Duration) int {
	t.Helper()
	for i := range seeks {
		s := &seeks[i]
		s.start = s.rf.MarkBefore(s.target).T
		if s.start > s.target || s.target-s.start > frameEvery+max(time.Second, silence) {
			t.Errorf("seek to %s starts at %s (no event for at most %s)", s.target, s.start, silence)
		}
		if want := lastMarkAtOrBefore(s.rf.Marks, s.target); s.start != want {
			t.Errorf("seek to %s starts at %s, not at the last mark at or before it, %s", s.target, s.start, want)
		}
		sc, err := s.rf.ScanFrom(s.target)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		// To a second past the target, and past every node's next whole
		// sample: what a replay charts there.
		s.late = max(time.Second, gap)
		s.sc, s.stop, s.based = sc, max(s.target, s.start+fullEvery)+s.late, map[source.NodeID]bool{}
		s.advance()
		// Near the end a scan may read nothing: a last frame of deltas
		// alone (then the whole read must have nothing else from there).
		if s.next != nil && s.next.Offset > s.start+fullEvery+s.late {
			t.Errorf("seek to %s (a mark at %s) reads first an event at %s", s.target, s.start, s.next.Offset)
		}
	}
	all, err := whole.ScanFrom(0)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	if m := whole.MarkBefore(0); m.Pos != 0 {
		t.Fatalf("the whole read starts at %d", m.Pos)
	}
	samples := 0
	for all.Next() {
		ev := all.Event()
		if ev.Kind == source.EventSample {
			samples++
		}
		for i := range seeks {
			s := &seeks[i]
			switch {
			case s.next == nil:
				// After the scan's end the whole read may hold only what
				// the scan skips (near the end, a node whose last whole
				// sample came before the mark); after where it stops, or
				// where its file was cut, anything.
				if s.eof && !s.cut && (s.matched > 0 || ev.Offset >= s.start) && !s.skippable(ev) {
					t.Fatalf("seek to %s ended before the whole read: its %s of %s at %s is not read", s.target, ev.Kind, ev.Node, ev.Offset)
				}
			case ev.Offset == s.next.Offset && reflect.DeepEqual(ev, *s.next):
				s.note(ev)
				s.advance()
			case s.matched > 0 && !s.skippable(ev):
				// Before the scan's first event, anything.
				t.Fatalf("seek to %s: the whole read's %s of %s at %s is not read (after %d events)", s.target, ev.Kind, ev.Node, ev.Offset, s.matched)
			}
		}
	}
	if err := all.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeks {
		if s.err != nil {
			t.Fatalf("seek to %s: %v", s.target, s.err)
		}
		if s.next != nil {
			t.Fatalf("seek to %s: its event %d (%s at %s) is not the whole read's", s.target, s.matched, s.next.Kind, s.next.Offset)
		}
		if !s.eof && len(s.based) != len(whole.Header.Servers) {
			t.Fatalf("seek to %s (a mark at %s): whole samples of %d nodes read, of %d", s.target, s.start, len(s.based), len(whole.Header.Servers))
		}
		if s.matched == 0 && s.eof && !s.cut {
			continue // read nothing, and the whole read had nothing else
		}
		// The scan read to past the target (the clock a replay shows
		// there), or to its file's end.
		if s.read < min(s.target, s.rf.End-time.Second) {
			t.Fatalf("seek to %s (a mark at %s): %d events read, up to %s", s.target, s.start, s.matched, s.read)
		}
	}
	return samples
}

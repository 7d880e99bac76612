package record

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

// TestRealRecordingSeeks: two real servers watched at a 10 ms interval and
// recorded through the Writer as .zst (frames of 1 s, so that a seek has
// marks to land on), until the recording holds 3,000 samples; reopened, it
// is indexed from its trailer, and a seek to each of several times starts
// within a frame before the time and reads from there the very events a
// whole read has, skipping only a node's deltas before its first whole
// sample.
func TestRealRecordingSeeks(t *testing.T) {
	defer func(d time.Duration) { frameEvery = d }(frameEvery)
	frameEvery = time.Second
	const want = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := source.NewClock()
	h := Header{VKWatch: "test", Epoch: clock.Epoch(), Settings: map[string]string{"interval": "10ms"}}
	var watchers []*source.Watcher
	for range 2 {
		s := servertest.Start(t, server.Options{})
		ep := sourcetest.Endpoint(t, s.Addr)
		w := source.NewWatcher(ep.Node(), ep, clock, source.WatchConfig{Interval: 10 * time.Millisecond, PingInterval: 5 * time.Millisecond})
		defer w.Close()
		id, err := w.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h.Servers = append(h.Servers, ServerInfo{Node: ep.Node(), Addr: ep.String(), Identity: &id})
		watchers = append(watchers, w)
	}
	path := filepath.Join(t.TempDir(), "real.jsonl.zst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rw, err := NewCompressedWriter(f, "jsonl", Zstd, h)
	if err != nil {
		t.Fatal(err)
	}
	var samples atomic.Int64
	enough := make(chan struct{})
	var once sync.Once
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, w := range watchers {
		wg.Go(func() {
			w.Run(runCtx, func(ev source.Event) {
				if err := rw.Write(ev); err != nil {
					t.Errorf("write: %v", err)
				}
				if ev.Kind == source.EventSample && samples.Add(1) >= want {
					once.Do(func() { close(enough) })
				}
			})
		})
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatalf("%d samples of %d within the deadline", samples.Load(), want)
	}
	stop()
	wg.Wait()
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}

	rf, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	if _, ok := rf.readTrailer(); !ok || rf.Truncated {
		t.Fatalf("the recording has no trailer a reader takes (truncated %v: %s)", rf.Truncated, rf.Why)
	}
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := rec.Events
	n := 0
	for _, ev := range whole {
		if ev.Kind == source.EventSample {
			n++
		}
	}
	if n < want || rf.Start != whole[0].Offset {
		t.Fatalf("%d samples read back (want %d); span %s..%s, the first event at %s", n, want, rf.Start, rf.End, whole[0].Offset)
	}
	for _, frac := range []float64{0.1, 0.35, 0.5, 0.8, 0.97} {
		target := rf.Start + time.Duration(frac*float64(rf.End-rf.Start))
		checkSeek(t, rf, whole, target)
	}
}

// checkSeek seeks rf to target and checks what it reads against whole.
func checkSeek(t *testing.T, rf *File, whole []source.Event, target time.Duration) {
	t.Helper()
	sc, err := rf.ScanFrom(target)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var got []source.Event
	for sc.Next() {
		got = append(got, sc.Event())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("seek to %s: %v", target, err)
	}
	// The scan starts at the last frame mark before the target.
	start := rf.MarkBefore(target).T
	if start > target || target-start > frameEvery+time.Second {
		t.Errorf("seek to %s starts at %s", target, start)
	}
	if len(got) == 0 {
		// Near the end: a last frame of deltas alone reads as nothing.
		for _, ev := range whole {
			if ev.Offset >= start && (ev.Kind != source.EventSample || ev.Offset > start+fullEvery+time.Second) {
				t.Fatalf("seek to %s (a mark at %s) read nothing; the whole read has a %s at %s", target, start, ev.Kind, ev.Offset)
			}
		}
		return
	}
	if got[0].Offset > start+fullEvery+time.Second {
		t.Errorf("seek to %s (a mark at %s) reads first an event at %s", target, start, got[0].Offset)
	}
	j := 0
	for j < len(whole) && !reflect.DeepEqual(whole[j], got[0]) {
		j++
	}
	// based: the nodes whose whole sample the scan has read; a node's
	// deltas after it always decode.
	based := map[source.NodeID]bool{}
	skippable := func(ev source.Event) bool {
		return ev.Kind == source.EventSample && !based[ev.Node] && ev.Offset <= start+fullEvery+time.Second
	}
	for i, ev := range got {
		for j < len(whole) && !reflect.DeepEqual(whole[j], ev) {
			// Skipped: only a node's deltas before its first whole sample.
			if !skippable(whole[j]) {
				t.Fatalf("seek to %s: event %d (%s at %s) not read", target, j, whole[j].Kind, whole[j].Offset)
			}
			j++
		}
		if j == len(whole) {
			t.Fatalf("seek to %s: its event %d (%s at %s) is not the whole read's", target, i, ev.Kind, ev.Offset)
		}
		if ev.Kind == source.EventSample {
			based[ev.Node] = true
		}
		j++
	}
	// After the scan's last event the whole read may hold only what the
	// scan skips: a node's deltas before its first whole sample (near the
	// end, a node whose last whole sample came before the mark).
	for ; j < len(whole); j++ {
		if !skippable(whole[j]) {
			t.Fatalf("seek to %s ended %d events before the whole read: event %d (%s at %s) not read", target, len(whole)-j, j, whole[j].Kind, whole[j].Offset)
		}
	}
}

package procmem

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// watched is a real server watched by a watch.Watcher whose /proc figures
// come from a Reader, as vkwatch runs it.
type watched struct {
	srv    *server.Server
	c      *redis.Client
	w      *watch.Watcher
	events <-chan source.Event
}

func watchLocal(t *testing.T, interval time.Duration) *watched {
	t.Helper()
	r := newReader(t)
	srv := servertest.StartDefault(t)
	ep := sourcetest.Endpoint(t, srv.Addr)
	x := &watched{srv: srv, c: servertest.Client(t, srv)}
	x.w = watch.New(ep.Node(), ep, source.NewClock(), watch.Config{Interval: interval, Proc: r.Read})
	x.events = watchtest.Run(t, x.w, 100000)
	return x
}

// until collects events until match holds for one.
func (x *watched) until(t *testing.T, within time.Duration, what string, match func(source.Event) bool) []source.Event {
	t.Helper()
	var seen []source.Event
	if _, ok := servertest.Receive(x.events, within, func(ev source.Event) bool {
		seen = append(seen, ev)
		return match(ev)
	}); !ok {
		t.Fatalf("no %s within %s", what, within)
	}
	return seen
}

func isKind(k source.EventKind) func(source.Event) bool {
	return func(ev source.Event) bool { return ev.Kind == k }
}

// fill writes keys key:0..n-1 of 300 random bytes and starts writers
// overwriting them until the test ends.
func (x *watched) fill(t *testing.T, n, writers int) *load.Writers {
	t.Helper()
	cfg := load.Config{Prefix: "key:", Keys: n, Writers: writers}
	opts := &redis.Options{Addr: x.srv.Addr}
	if err := load.Preload(context.Background(), opts, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if writers == 0 {
		return nil
	}
	w, err := load.StartWriters(context.Background(), opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func (x *watched) persistence(t *testing.T) source.Info {
	t.Helper()
	text, err := x.c.Info(context.Background(), "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	return source.ParseInfo(text)
}

// saveUnderLoad sends BGSAVE through the watcher and returns the samples
// from the one before the save to the first after it, and the report.
func (x *watched) saveUnderLoad(t *testing.T) ([]*source.Sample, *source.SaveReport) {
	t.Helper()
	// Samples queued so far are from before the dataset was written.
	for len(x.events) > 0 {
		<-x.events
	}
	var before *source.Sample
	x.until(t, 10*time.Second, "a sample", func(ev source.Event) bool {
		if ev.Kind == source.EventSample {
			before = ev.Sample
		}
		return before != nil
	})
	if r := x.w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatalf("BGSAVE: %s", r.Err)
	}
	samples := []*source.Sample{before}
	var rep *source.SaveReport
	x.until(t, 120*time.Second, "the save's end", func(ev source.Event) bool {
		if ev.Kind == source.EventSample {
			samples = append(samples, ev.Sample)
		}
		if ev.Kind == source.EventSaveEnded {
			rep = ev.Report
		}
		return rep != nil
	})
	return samples, rep
}

// TestShortSaveCOWPeakThroughProc: in a fork save shorter than 2 s under
// writers, the largest Sample.COW (what the UI charts, here the child's
// Private_Dirty from /proc at every 200 ms sample) is within 20 % of what
// the save cost by the server's own count, rdb_last_cow_size. INFO's
// current_cow_size, refreshed by the server about once a second, may stay
// near 0 in such a save.
//
// The save is brought to between 1 and 2 s on this machine: a busy machine
// saves slower (the dataset is halved), a quiet one faster than the claim
// needs. A save of 400 ms, as 200,000 keys take on a quiet machine, holds
// one or two samples, the last of them up to an interval before the
// child's end; a claim about the sampled peak needs a few. A save outside
// the window is made again with the key count scaled to aim at 1.5 s, and
// where that would need more than 400,000 keys, with rdb-key-save-delay 1
// (the server sleeps after every key: about 65 µs on the build machine)
// and 25,000 keys.
func TestShortSaveCOWPeakThroughProc(t *testing.T) {
	x := watchLocal(t, 200*time.Millisecond)
	x.until(t, 10*time.Second, "connected", isKind(source.EventConnected))
	ctx := context.Background()
	keys, delay := 200000, 0
	for try := 1; ; try++ {
		if err := x.c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := x.c.ConfigSet(ctx, "rdb-key-save-delay", strconv.Itoa(delay)).Err(); err != nil {
			t.Fatal(err)
		}
		w := x.fill(t, keys, 2)
		samples, rep := x.saveUnderLoad(t)
		w.Stop()
		info := x.persistence(t)
		var peak int64
		var fromProc int
		for _, s := range samples[1:] {
			if s.Save != nil && s.COW.OK {
				peak = max(peak, s.COW.V)
				if s.COWFrom == source.FromProc {
					fromProc++
				}
			}
		}
		cow := info.RDBLastCOW.V
		t.Logf("%d keys, rdb-key-save-delay %d µs: save observed %s (%ds by the server), rdb_last_cow_size %d, peak COW %d (%.1f%%) "+
			"in %d samples from /proc, peak current_cow_size %d", keys, delay, rep.Observed, info.RDBLastTime.V, cow, peak,
			100*float64(peak)/float64(cow), fromProc, rep.PeakLiveCOW.V)
		if rep.PeakCOW != source.Some(peak) {
			t.Errorf("report PeakCOW %+v, the samples' peak %d", rep.PeakCOW, peak)
		}
		if rep.Observed < time.Second || rep.Observed >= 2*time.Second {
			if try == 10 {
				t.Fatalf("no save between 1 and 2 s in %d tries", try)
			}
			// Aim at the middle of the window from what this save took: a
			// busy machine's pace changes from one try to the next, and
			// steps of two from just outside a window two wide overshoot
			// it again. Under writers a save's time grows faster than its
			// keys (seen: 1.9 times the keys, 5 times the time), so the
			// step is the square root of the ratio.
			next := int(float64(keys) * math.Sqrt(1.5/max(rep.Observed.Seconds(), 0.001)))
			next = min(max(next, keys/4), keys*4)
			if delay == 0 && next > 400000 {
				// A quiet machine: the server sleeps after each key rather
				// than the test holding more data.
				delay, next = 1, 25000
			}
			if next < 2000 {
				t.Fatalf("even %d keys took %s to save: no short save on this machine", keys, rep.Observed)
			}
			keys = next
			continue
		}
		if fromProc == 0 || cow < 1<<20 {
			t.Fatalf("%d samples from /proc, rdb_last_cow_size %d: nothing to compare", fromProc, cow)
		}
		if d := peak - cow; d*5 > cow || -d*5 > cow {
			t.Errorf("peak COW %d is not within 20%% of rdb_last_cow_size %d", peak, cow)
		}
		return
	}
}

// TestFootprintUnderWriters: during a fork save under writers the host
// pays the server's RSS plus the child's copy-on-write pages: Footprint
// rises by at least 80 % of rdb_last_cow_size and falls back when the
// child exits, while used_memory and RSS of the server stay flat.
func TestFootprintUnderWriters(t *testing.T) {
	// 200,000 keys save in about 400 ms on a quiet machine: at 200 ms a
	// sample, the last one during the save came up to half the save
	// before its end, while the writers still dirtied pages (seen: the
	// footprint's peak 59% of rdb_last_cow_size, 2 failures in 6 runs).
	// At 25 ms the last is at most a sixteenth of such a save early.
	x := watchLocal(t, 25*time.Millisecond)
	x.until(t, 10*time.Second, "connected", isKind(source.EventConnected))
	x.fill(t, 200000, 2)
	samples, rep := x.saveUnderLoad(t)
	// A few samples after the end, for the fall.
	for range 3 {
		ev := x.until(t, 10*time.Second, "a sample", isKind(source.EventSample))
		samples = append(samples, ev[len(ev)-1].Sample)
	}
	cow := x.persistence(t).RDBLastCOW.V
	// The baseline is the last sample before one shows the save running,
	// as the tracker's: under writers RSS moves between samples, so an
	// earlier one would not be the level the save started from.
	base := samples[0]
	for i, s := range samples {
		if s.Save != nil {
			if i > 0 {
				base = samples[i-1]
			}
			break
		}
	}
	if base.FootprintFrom != source.FromProc || !base.Footprint.OK {
		t.Fatalf("footprint before the save %+v from %q, want /proc", base.Footprint, base.FootprintFrom)
	}
	var peak int64
	var peakRSS int64
	for _, s := range samples[1:] {
		if s.Save != nil && s.FootprintFrom == source.FromProc {
			peak = max(peak, s.Footprint.V)
			peakRSS = max(peakRSS, s.Info.RSS.V)
		}
	}
	after := samples[len(samples)-1]
	minAlloc := base.Info.AllocatorRSS.V
	for _, s := range samples {
		if s.Info.AllocatorRSS.OK {
			minAlloc = min(minAlloc, s.Info.AllocatorRSS.V)
		}
	}
	t.Logf("rdb_last_cow_size %d; footprint %d before, peak +%d, %d after (%+d); used_memory_rss peak +%d; report +%+v; peak child dirty %+v; allocator_rss_bytes %d before, lowest %d",
		cow, base.Footprint.V, peak-base.Footprint.V, after.Footprint.V, after.Footprint.V-base.Footprint.V,
		peakRSS-base.Info.RSS.V, rep.PeakFootprintDelta, rep.PeakCOW, base.Info.AllocatorRSS.V, minAlloc)
	if cow < 8<<20 {
		t.Fatalf("rdb_last_cow_size %d: the writers dirtied too little to measure", cow)
	}
	if rise := peak - base.Footprint.V; rise*5 < cow*4 {
		t.Errorf("footprint rose by %d, less than 80%% of rdb_last_cow_size %d", rise, cow)
	}
	if rep.PeakFootprintDelta != source.Some(peak-base.Footprint.V) {
		t.Errorf("report PeakFootprintDelta %+v, the samples say %d", rep.PeakFootprintDelta, peak-base.Footprint.V)
	}
	if after.Save != nil || after.FootprintFrom != source.FromProc {
		t.Fatalf("last sample: save %+v, footprint from %q", after.Save, after.FootprintFrom)
	}
	if fall := peak - after.Footprint.V; fall*5 < cow*4 {
		t.Errorf("footprint fell by %d after the save, less than 80%% of rdb_last_cow_size %d", fall, cow)
	}
}

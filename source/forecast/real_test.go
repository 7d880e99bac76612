package forecast

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	sourcewatch "github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// watched is a real server, its dataset and a watcher feeding a Node.
type watched struct {
	srv    *server.Server
	client *redis.Client
	w      *sourcewatch.Watcher
	events <-chan source.Event
	node   Node
	last   *source.Sample
}

func watch(t *testing.T, keys, delay int) *watched {
	t.Helper()
	srv := servertest.StartDefault(t)
	x := &watched{srv: srv, client: servertest.Client(t, srv)}
	ctx := context.Background()
	opts := &redis.Options{Addr: srv.Addr}
	if err := load.Preload(ctx, opts, load.Config{Keys: keys}, nil); err != nil {
		t.Fatal(err)
	}
	if err := x.client.ConfigSet(ctx, "rdb-key-save-delay", strconv.Itoa(delay)).Err(); err != nil {
		t.Fatal(err)
	}
	ep := sourcetest.Endpoint(t, srv.Addr)
	x.w = sourcewatch.New("n", ep, nil, sourcewatch.Config{Interval: 100 * time.Millisecond})
	if _, err := x.w.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	x.events = watchtest.Run(t, x.w, 4096)
	return x
}

// until feeds events to the node until cond holds after one, or fails.
func (x *watched) until(t *testing.T, within time.Duration, what string, cond func(ev source.Event) bool) source.Event {
	t.Helper()
	ev, ok := servertest.Receive(x.events, within, func(ev source.Event) bool {
		switch ev.Kind {
		case source.EventSample:
			x.node.Observe(ev.Sample)
			x.last = ev.Sample
		case source.EventSaveEnded:
			x.node.Learn(ev.Report)
		}
		return cond(ev)
	})
	if !ok {
		t.Fatalf("no %s within %s", what, within)
	}
	return ev
}

// steady waits for a full RateWindow of samples taken since now, so the
// node's rate is the rate from now on.
func (x *watched) steady(t *testing.T) {
	t.Helper()
	var from time.Duration = -1
	x.until(t, 30*time.Second, "a steady rate", func(ev source.Event) bool {
		if ev.Kind != source.EventSample || ev.Sample.Save != nil {
			return false
		}
		if from < 0 {
			from = ev.Sample.Offset
		}
		return ev.Sample.Offset-from > RateWindow
	})
}

// save sends BGSAVE and returns its report.
func (x *watched) save(t *testing.T) *source.SaveReport {
	t.Helper()
	if r := x.w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	return x.until(t, 2*time.Minute, "the save's report", func(ev source.Event) bool {
		return ev.Kind == source.EventSaveEnded && ev.Report.Kind == source.SaveFork
	}).Report
}

// pacedWriter overwrites random keys of the dataset at a fixed rate. The
// load package's writers write as fast as the machine lets them, which
// on a busy two-core machine moves by a factor of two between runs and
// would copy every page of a test-sized dataset: a forecast between two
// known rates needs rates the test sets.
type pacedWriter struct {
	stop chan struct{}
	wg   sync.WaitGroup
	sent atomic.Int64
}

func startPaced(t *testing.T, addr string, keys, perSec int) *pacedWriter {
	t.Helper()
	p := &pacedWriter{stop: make(chan struct{})}
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	value := strings.Repeat("w", load.DefaultValueSize)
	const tick = 20 * time.Millisecond
	batch := perSec * int(tick) / int(time.Second)
	p.wg.Go(func() {
		defer c.Close()
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tk.C:
			}
			pipe := c.Pipeline()
			for range batch {
				pipe.SetXX(context.Background(), load.DefaultPrefix+strconv.Itoa(rand.IntN(keys)), value, 0)
			}
			if _, err := pipe.Exec(context.Background()); err != nil {
				t.Errorf("paced writer: %v", err)
				return
			}
			p.sent.Add(int64(batch))
		}
	})
	return p
}

func (p *pacedWriter) Stop() { close(p.stop); p.wg.Wait() }

func serverCOW(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	in := source.ParseInfo(c.Info(context.Background(), "persistence").Val())
	v, ok := in.RDBLastCOW.Get()
	if !ok {
		t.Fatal("no rdb_last_cow_size")
	}
	return v
}

// A calibration save at one write rate, then the forecast of a save at
// three times that rate, against what the server says that save copied.
func TestForecastCalibratedAtTwoRates(t *testing.T) {
	const keys = 50_000
	// A save of 2 s on a quiet machine, up to 8 s on a busy one (the
	// child's sleeps overshoot): either way short of copying everything.
	x := watch(t, keys, 40)
	slow := startPaced(t, x.srv.Addr, keys, 250)
	x.steady(t)
	bound, ok := x.node.Forecast()
	if !ok || bound.Basis != Bound {
		t.Fatalf("before any save: %+v, %v; want the uniform bound", bound, ok)
	}
	rep := x.save(t)
	slow.Stop()
	calCOW := serverCOW(t, x.client)
	if !bound.Bound.OK || bound.Bound.V < calCOW {
		t.Errorf("uniform bound %v below the actual %d", bound.Bound, calCOW)
	}
	cal := x.node.Calibration()
	if cal == nil || cal.K <= 0 || cal.KeysPerSec <= 0 {
		t.Fatalf("no calibration from %+v: %+v", rep, cal)
	}
	t.Logf("calibration: %s in %.2fs at %.0f ops/s: k %.2f, %.0f keys/s (bound forecast %d)",
		mib(calCOW), cal.Seconds, cal.Rate, cal.K, cal.KeysPerSec, bound.Bound.V)

	fast := startPaced(t, x.srv.Addr, keys, 750)
	defer fast.Stop()
	x.steady(t)
	f, ok := x.node.Forecast()
	if !ok || f.Basis != Calibrated {
		t.Fatalf("after a save: %+v, %v; want a calibrated forecast", f, ok)
	}
	x.save(t)
	actual := serverCOW(t, x.client)
	e, _ := Error(f.COW, actual)
	t.Logf("forecast %s (%.0f ops/s, %.2fs, %s) against actual %s: %+.1f%%; bound %s",
		mib(f.COW), f.Rate.V, f.Duration.Seconds(), f.DurationFrom, mib(actual), 100*e, mib(f.Bound.V))
	if e < -0.3 || e > 0.3 {
		t.Errorf("forecast %s is %+.0f%% off the actual %s", mib(f.COW), 100*e, mib(actual))
	}
	if f.COW <= calCOW {
		t.Errorf("three times the writes forecast %s, no more than the calibration save's %s", mib(f.COW), mib(calCOW))
	}
	if f.Bound.V < actual {
		t.Errorf("uniform bound %s below the actual %s", mib(f.Bound.V), mib(actual))
	}
}

func mib(v int64) string { return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20)) }

// saveChild finds the server's save child in /proc (Redis and Valkey fork
// in their main thread).
func saveChild(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	c, err := strconv.Atoi(f[0])
	return c, err == nil
}

// A save whose child is stopped is stuck; resumed, it is not.
func TestStuckSaveStoppedChild(t *testing.T) {
	const keys = 20_000
	x := watch(t, keys, 500) // 10 s of save: time to stop it midway
	x.steady(t)
	if r := x.w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.until(t, 30*time.Second, "progress", func(ev source.Event) bool {
		return ev.Kind == source.EventSample && ev.Sample.Save != nil && ev.Sample.Save.Processed.V > 0
	})
	child, ok := saveChild(x.srv.PID())
	if !ok {
		t.Fatal("no save child in /proc")
	}
	if err := syscall.Kill(child, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			syscall.Kill(child, syscall.SIGCONT)
		}
	}()
	if why, stuck := x.node.Stuck(); stuck {
		t.Errorf("stuck at once: %s", why)
	}
	x.until(t, 3*StallAfter, "the stopped save called stuck", func(source.Event) bool {
		_, stuck := x.node.Stuck()
		return stuck
	})
	why, _ := x.node.Stuck()
	t.Logf("stopped: %s", why)
	if !strings.HasPrefix(why, "no progress for ") {
		t.Errorf("why: %q", why)
	}
	if err := syscall.Kill(child, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	x.until(t, 30*time.Second, "the resumed save no longer stuck", func(ev source.Event) bool {
		_, stuck := x.node.Stuck()
		return ev.Kind == source.EventSample && ev.Sample.Save != nil && !stuck
	})
	x.until(t, 2*time.Minute, "the save's end", func(ev source.Event) bool { return ev.Kind == source.EventSaveEnded })
	if why, stuck := x.node.Stuck(); stuck {
		t.Errorf("stuck after the save: %s", why)
	}
}

// TestIdleFirstSaveWithinTheAssumedFloor: an idle real server never saved
// before is forecast at the assumed floor (the uniform bound of no writes
// is 0 B) and the allocator's free pages, and its first save, which copies
// the server's own pages, comes out at or below it.
func TestIdleFirstSaveWithinTheAssumedFloor(t *testing.T) {
	x := watch(t, 200_000, 0)
	x.steady(t)
	f, ok := x.node.Forecast()
	// The floors: what the server's own writes are assumed to copy, and
	// the allocator's free pages. The bound may hold a few pages more for
	// the handful of ops/s an idle server still shows at its peak (the
	// monitor's own commands as INFO counts them, and the preload's tail
	// in instantaneous_ops_per_sec), never less.
	floors := assumedOwnCOW + f.AllocatorFree.Or(0)
	if !ok || f.Basis != Bound || f.COW < floors {
		t.Fatalf("idle, no save seen: %+v (rate %+v, peak %+v)", f, x.node.Rate(), x.node.Peak())
	}
	r := x.save(t)
	cow, ok := r.COW.Get()
	if !ok {
		t.Fatalf("the report has no rdb_last_cow_size: %+v", r)
	}
	t.Logf("idle first save: rdb_last_cow_size %d B, the floors %d B, the bound %d B", cow, floors, f.COW)
	if cow > floors {
		t.Errorf("the first idle save copied %d B, above the assumed floor and the allocator's pages, %d B", cow, floors)
	}
}

// TestAllocatorPagesGivenBackDuringASaveWithinTheBound: pages a real
// server's allocator holds freed but resident, given back while an idle
// save's child shares them (MEMORY PURGE here; jemalloc's decay does it
// by itself seconds after a preload), are counted by rdb_last_cow_size as
// copied. The bound of a node never saved before holds them.
func TestAllocatorPagesGivenBackDuringASaveWithinTheBound(t *testing.T) {
	// 32 MiB of small values, set and deleted: jemalloc keeps the emptied
	// slabs' pages (one string that large it would give back at once).
	const n, size = 32 << 10, 1 << 10
	x := watch(t, 100_000, 30) // 3 s of save: time to give pages back midway
	ctx := context.Background()
	value := strings.Repeat("x", size)
	for _, del := range []bool{false, true} {
		p := x.client.Pipeline()
		for i := range n {
			if key := fmt.Sprintf("vkwatch:test:freed:%d", i); del {
				p.Del(ctx, key)
			} else {
				p.Set(ctx, key, value, 0)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	x.steady(t) // idle again: the bound is the floors alone
	var seen int64
	x.until(t, 30*time.Second, "a sample with the freed values' pages in allocator_rss_bytes", func(ev source.Event) bool {
		if ev.Kind != source.EventSample {
			return false
		}
		seen = max(seen, ev.Sample.Info.AllocatorRSS.Or(0))
		return seen >= n*size/4
	})
	f, ok := x.node.Forecast()
	if !ok || f.Basis != Bound || !f.AllocatorFree.OK {
		t.Fatalf("idle, no save seen, pages free: %+v", f)
	}
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.until(t, 30*time.Second, "the save running", func(ev source.Event) bool {
		return ev.Kind == source.EventSample && ev.Sample.Save != nil
	})
	if err := x.client.Do(ctx, "MEMORY", "PURGE").Err(); err != nil {
		t.Fatal(err)
	}
	r := x.until(t, 2*time.Minute, "the save's report", func(ev source.Event) bool {
		return ev.Kind == source.EventSaveEnded && ev.Report.Kind == source.SaveFork
	}).Report
	cow, ok := r.COW.Get()
	if !ok {
		t.Fatalf("the report has no rdb_last_cow_size: %+v", r)
	}
	t.Logf("pages given back during an idle save: rdb_last_cow_size %d B; bound %d B, %d B of it the allocator's", cow, f.Bound.V, f.AllocatorFree.V)
	if cow <= assumedOwnCOW {
		t.Errorf("the save copied %d B, within the floor without the allocator's pages (%d B): the pages were not given back during it", cow, assumedOwnCOW)
	}
	// The bound may hold writes too (INFO's ops/s lags the pipeline's);
	// the floors alone must hold this idle save.
	if floors := min(assumedOwnCOW+f.AllocatorFree.V, f.Bound.V); cow > floors {
		t.Errorf("the save copied %d B, above the floor and the allocator's pages, %d B (bound %d B)", cow, floors, f.Bound.V)
	}
}

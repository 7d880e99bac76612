package metrics

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// TestPrometheusScrapesASave watches a real server through a real BGSAVE
// with writes under way, serves the exporter on loopback and has a real
// Prometheus scrape it: Prometheus must have seen the save in progress and
// the footprint rise, and hold the finished save's copy-on-write equal to
// the server's own rdb_last_cow_size.
func TestPrometheusScrapesASave(t *testing.T) {
	// 20,000 keys at 100 us a key: a save of about 2 s, long enough for
	// Prometheus's 100 ms scrapes to see it run.
	srv, adm := servertest.StartSlowSave(t, 20000, 300, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	exp := New()
	ms, err := Listen("127.0.0.1:0", exp)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ms.Close(); err != nil {
			t.Errorf("close metrics server: %v", err)
		}
	}()
	prom := startPrometheus(t, ms.Addr())

	pr, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	ep := sourcetest.Endpoint(t, srv.Addr)
	f := fleet.NewList([]fleet.Member{{ID: ep.Node(), Endpoint: ep}}, fleet.Config{
		Watch: watch.Config{Interval: 100 * time.Millisecond},
		Configure: func(_ fleet.Member, cfg *watch.Config) {
			cfg.Proc = pr.Read
		},
	})
	defer f.Close()
	if _, err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		reports []source.SaveReport
	)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() {
		f.Run(runCtx, func(ev source.Event) {
			exp.Observe(ev)
			if ev.Kind == source.EventSaveEnded && ev.Report != nil {
				mu.Lock()
				reports = append(reports, *ev.Report)
				mu.Unlock()
			}
		})
	})
	node := string(ep.Node())
	sel := fmt.Sprintf(`{node=%q}`, node)
	// The footprint before the save, once Prometheus has it.
	prom.one(t, "vkwatch_footprint_bytes"+sel, time.Minute)

	if r := f.Do(ctx, ep.Node(), "BGSAVE"); !r.OK() {
		t.Fatalf("BGSAVE: %s", r.Err)
	}
	// Overwrite the keys while the child saves: the pages the parent
	// writes are copied, which is the cost under test.
	writeCtx, stopWrites := context.WithCancel(ctx)
	var ww sync.WaitGroup
	ww.Go(func() { overwrite(writeCtx, adm, 20000) })
	servertest.WaitFor(t, time.Minute, "the save to end", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reports) > 0
	})
	stopWrites()
	ww.Wait()
	mu.Lock()
	rep := reports[0]
	mu.Unlock()

	info, err := adm.Info(ctx, "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	lastCOW := servertest.InfoField(t, info, "rdb_last_cow_size")
	if lastCOW <= 0 {
		t.Fatalf("rdb_last_cow_size is %d: the writes made no copy-on-write to compare", lastCOW)
	}

	got := prom.one(t, "vkwatch_last_save_cow_bytes"+sel, time.Minute)
	if int64(got.Value) != lastCOW {
		t.Errorf("Prometheus has vkwatch_last_save_cow_bytes %v, the server's rdb_last_cow_size is %d", got.Value, lastCOW)
	}
	if got.Labels["kind"] != string(source.SaveFork) || got.Labels["status"] != "ok" {
		t.Errorf("labels %v: want kind %q status ok", got.Labels, source.SaveFork)
	}

	rise := prom.one(t, "vkwatch_last_save_footprint_rise_bytes"+sel, time.Minute)
	want, ok := rep.PeakFootprintDelta.Get()
	if !ok || want <= 0 {
		t.Fatalf("the save's report has no footprint rise (%v): nothing to compare", rep.PeakFootprintDelta)
	}
	if int64(rise.Value) != want {
		t.Errorf("Prometheus has vkwatch_last_save_footprint_rise_bytes %v, the report %d", rise.Value, want)
	}
	if rise.Labels["instrument"] != string(source.FromProc) {
		t.Errorf("footprint rise instrument %q, want %q (a local server's /proc)", rise.Labels["instrument"], source.FromProc)
	}
	// The rise was scraped live too: the footprint series went up by at
	// least a part of it during the save (samples between scrapes may
	// hold the peak, so not all of it).
	span := prom.one(t, "max_over_time(vkwatch_footprint_bytes"+sel+"[5m]) - min_over_time(vkwatch_footprint_bytes"+sel+"[5m])", time.Minute)
	if span.Value <= 0 {
		t.Errorf("vkwatch_footprint_bytes never moved during the save (span %v)", span.Value)
	}
	saving := prom.one(t, "max_over_time(vkwatch_save_in_progress"+sel+"[5m])", time.Minute)
	if saving.Value != 1 {
		t.Errorf("Prometheus never saw vkwatch_save_in_progress at 1 (max %v)", saving.Value)
	}
	if p := prom.one(t, "max_over_time(vkwatch_save_progress_ratio"+sel+"[5m])", time.Minute); p.Value <= 0 || p.Value > 1 {
		t.Errorf("max progress %v, want in (0, 1]", p.Value)
	}
	if d := prom.one(t, "vkwatch_last_save_duration_seconds"+sel, time.Minute); d.Value <= 0.5 {
		t.Errorf("save duration %v s, want about 2 s", d.Value)
	}
	if _, ok := rep.ForkPause.Get(); ok {
		prom.one(t, "vkwatch_last_save_fork_pause_seconds"+sel, time.Minute)
	}
	for _, stat := range []string{"p50", "p99", "max"} {
		p := prom.one(t, fmt.Sprintf(`vkwatch_ping_seconds{node=%q,stat=%q}`, node, stat), time.Minute)
		if p.Value <= 0 || p.Value > 10 {
			t.Errorf("PING %s %v s: want a round trip", stat, p.Value)
		}
	}
}

// overwrite SETs existing keys until ctx ends.
func overwrite(ctx context.Context, c *redis.Client, keys int) {
	val := strings.Repeat("x", 300)
	for i := 0; ctx.Err() == nil; i++ {
		pipe := c.Pipeline()
		for j := range 100 {
			pipe.Set(ctx, "key:"+strconv.Itoa((i*100+j)%keys), val, 0)
		}
		_, _ = pipe.Exec(ctx)
	}
}

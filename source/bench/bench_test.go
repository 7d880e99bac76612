package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// progressLog keeps the lines Bench reports through Config.Progress,
// which it calls from its own goroutines.
type progressLog struct {
	mu    sync.Mutex
	lines []string
}

func (p *progressLog) add(m string) {
	p.mu.Lock()
	p.lines = append(p.lines, m)
	p.mu.Unlock()
}

// all is a copy of the lines so far.
func (p *progressLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lines)
}

func (p *progressLog) String() string { return strings.Join(p.all(), "\n") }

func persistence(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	text, err := c.Info(ctx, "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// startDelayed starts n servers at once whose saves take delayUS
// microseconds more a key (rdb-key-save-delay), stopped when the test
// ends, and gives their endpoints in the same order.
func startDelayed(t *testing.T, n, delayUS int) ([]*server.Server, []source.Endpoint) {
	t.Helper()
	srvs := servertest.StartMany(t, n, server.Options{Args: []string{"--rdb-key-save-delay", strconv.Itoa(delayUS)}})
	eps := make([]source.Endpoint, n)
	for i, s := range srvs {
		eps[i] = sourcetest.Endpoint(t, s.Addr)
	}
	return srvs, eps
}

// TestBenchTwoServers runs the experiment in miniature against two real
// servers and checks what it reports against what the servers say.
func TestBenchTwoServers(t *testing.T) {
	// 20,000 keys save in milliseconds, faster than the sampling can see; a
	// per-key delay in the save child stretches the save to about a second,
	// under write load, as a big dataset would.
	srvs, eps := startDelayed(t, 2, 50)
	a, b := srvs[0], srvs[1]

	var mu sync.Mutex
	events := map[source.NodeID]int{}
	var progress progressLog
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sums, err := Bench(ctx, Config{
		Endpoints: eps,
		Runs:      2,
		Window:    3 * time.Second,
		TriggerAt: 500 * time.Millisecond,
		Writers:   4,
		Keys:      20000,
		Preload:   true,
		Progress:  progress.add,
		Events: func(ev source.Event) {
			mu.Lock()
			events[ev.Node]++
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatalf("Bench: %v\nprogress:\n%s", err, progress.String())
	}
	if len(sums) != 2 {
		t.Fatalf("%d summaries", len(sums))
	}
	for i, s := range sums {
		c := servertest.Client(t, srvs[i])
		if s.Server != i || len(s.Runs) != 2 {
			t.Fatalf("summary %d: server %d, %d runs", i, s.Server, len(s.Runs))
		}
		if n, err := c.DBSize(ctx).Result(); err != nil || n != 20000 {
			t.Errorf("server %d holds %d keys (%v), want the 20000 preloaded", i, n, err)
		}
		for j, r := range s.Runs {
			rep := r.Report
			if rep.Kind != source.SaveFork || rep.Status != "ok" {
				t.Errorf("server %d run %d: kind %q status %q", i, j, rep.Kind, rep.Status)
			}
			if !rep.COW.OK || rep.COW != r.ServerCOW || rep.COWFrom != source.FromRDBLastCOW {
				t.Errorf("server %d run %d: report COW %v from %q, server's rdb_last_cow_size %v", i, j, rep.COW, rep.COWFrom, r.ServerCOW)
			}
			// rdb_last_bgsave_time_sec is whole seconds of the wall clock
			// (end's second less start's: up to a second more than the
			// save), counted to when the server's cron (10 Hz) reaps the
			// child; observed is between samples. So they may differ by a
			// second, a reap and a sampling interval at each end.
			slack := 1 + 0.1 + 2*DefaultInterval.Seconds()
			if d := math.Abs(rep.Observed.Seconds() - float64(r.ServerSeconds.V)); d > slack {
				t.Errorf("server %d run %d: observed save %s, server says %v s", i, j, rep.Observed, r.ServerSeconds)
			}
			if !rep.ServerSeconds.OK || rep.ServerSeconds != r.ServerSeconds {
				t.Errorf("server %d run %d: report server seconds %v, INFO %v", i, j, rep.ServerSeconds, r.ServerSeconds)
			}
			if r.WriterOps <= 0 || r.WorstPing <= 0 || r.P99Ping <= 0 || r.P99Ping > r.WorstPing {
				t.Errorf("server %d run %d: writer ops %.0f, worst PING %s, p99 %s", i, j, r.WriterOps, r.WorstPing, r.P99Ping)
			}
			if !r.MemDelta.OK {
				t.Errorf("server %d run %d: no memory delta", i, j)
			}
			// The forecast's rate is the writers' own up to the BGSAVE,
			// the rate it was made with.
			if v, ok := r.RateBefore.Get(); !ok || v <= 0 || r.Forecast.Rate != r.RateBefore {
				t.Errorf("server %d run %d: rate before the save %+v, the forecast's %+v", i, j, r.RateBefore, r.Forecast.Rate)
			}
			// The mean of a span is a weighted mean of its steps' rates:
			// never above their highest.
			if p, ok := r.PeakBefore.Get(); !ok || p < r.RateBefore.V {
				t.Errorf("server %d run %d: peak rate before the save %+v below its mean %+v", i, j, r.PeakBefore, r.RateBefore)
			}
			// The bound counts the allocator's free pages as the run began
			// (Debian's servers are built with jemalloc: the field is there).
			if !r.AllocatorFree.OK || r.Forecast.AllocatorFree != r.AllocatorFree {
				t.Errorf("server %d run %d: allocator_rss_bytes %+v, the bound's %+v", i, j, r.AllocatorFree, r.Forecast.AllocatorFree)
			}
			switch b := r.Forecast.Basis; {
			case j == 0 && b != forecast.Bound:
				t.Errorf("server %d run 1: forecast basis %q, want the uniform bound (no run before it)", i, b)
			case j > 0 && (b != forecast.Calibrated || !r.ForecastErr.OK):
				t.Errorf("server %d run %d: forecast basis %q, error %+v; want one calibrated on run 1", i, j+1, b, r.ForecastErr)
			}
			if r.DatasetKeys != 20000 || r.UsedMemory < 20000*300 || r.WriterMisses != 0 {
				t.Errorf("server %d run %d: dataset %d keys, used_memory %d, %d misses; want the 20000 keys of 300 B, none missed",
					i, j, r.DatasetKeys, r.UsedMemory, r.WriterMisses)
			}
		}
		// The last run's figures are what the server holds now.
		last := s.Runs[len(s.Runs)-1]
		p := persistence(t, c)
		if p["rdb_last_cow_size"] != strconv.FormatInt(last.ServerCOW.V, 10) || !last.ServerCOW.OK || p["rdb_saves"] != "2" {
			t.Errorf("server %d: INFO %s / %s saves, bench read %v", i, p["rdb_last_cow_size"], p["rdb_saves"], last.ServerCOW)
		}
		if s.COW.N != 2 || s.COW.Min > s.COW.Mean || s.COW.Mean > s.COW.Max {
			t.Errorf("server %d: COW stat %+v", i, s.COW)
		}
		if events[source.NodeID(s.Addr)] == 0 {
			t.Errorf("no events for server %d", i)
		}
	}

	var tab bytes.Buffer
	if err := result.WriteTable(&tab, sums); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{a.Addr, b.Addr, "copy-on-write", "worst PING", "BGSAVE fork", "dataset keys at run start", "20,000 / 20,000 / 20,000", "used_memory at run start",
		"forecast COW", "uniform bound", "calibrated", "forecast COW error, calibrated"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
	var js bytes.Buffer
	if err := result.WriteJSON(&js, sums); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Servers []struct {
			Addr string
			Runs []struct {
				COW         *int64 `json:"cow_bytes"`
				ServerCOW   *int64 `json:"server_cow_bytes"`
				DatasetKeys int64  `json:"dataset_keys"`
				UsedMemory  int64  `json:"used_memory_bytes"`
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Servers) != 2 || back.Servers[1].Addr != b.Addr || *back.Servers[1].Runs[1].COW != sums[1].Runs[1].ServerCOW.V ||
		back.Servers[1].Runs[1].DatasetKeys != 20000 || back.Servers[1].Runs[1].UsedMemory != sums[1].Runs[1].UsedMemory {
		t.Errorf("JSON: %s", js.String())
	}
	t.Logf("\n%s", tab.String())
}

// TestBenchRefusesWhileSaving: a run on top of a running save would measure
// neither, so bench refuses and says which server.
func TestBenchRefusesWhileSaving(t *testing.T) {
	s, c := servertest.StartSlowSave(t, 5000, 300, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// 5,000 keys at 1 ms each: a five-second save; wait until INFO shows it.
	deadline := time.Now().Add(10 * time.Second)
	for persistence(t, c)["rdb_bgsave_in_progress"] != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the save never showed as running")
		}
		time.Sleep(10 * time.Millisecond) // polling INFO, bounded by the deadline
	}
	_, err := Bench(ctx, Config{Endpoints: []source.Endpoint{sourcetest.Endpoint(t, s.Addr)}, Runs: 1, Keys: 1000, Window: time.Second, TriggerAt: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), s.Addr) || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("Bench during a save: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	// Nothing was written: the refusal came before any load.
	if n, _ := c.DBSize(ctx).Result(); n != 5000 {
		t.Errorf("%d keys after a refused bench, want the 5000 populated", n)
	}
}

// TestBenchRefusesMissingKeyspace: on a server holding the user's own
// 150,000 keys and none of the writers', bench without a preload refuses
// before writing anything and says what is missing; the server ran no
// SET and holds what it held.
func TestBenchRefusesMissingKeyspace(t *testing.T) {
	s, c := servertest.StartWithClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servertest.Populate(t, c, 150000, "key", 30)
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := Bench(ctx, Config{Endpoints: []source.Endpoint{sourcetest.Endpoint(t, s.Addr)}, Runs: 1, Keys: 1_000_000, Window: time.Second, TriggerAt: 100 * time.Millisecond})
	var ke *load.KeyspaceError
	if !errors.As(err, &ke) || ke.Found != 0 || !strings.HasPrefix(err.Error(), s.Addr+": the writers' keyspace vkwatch:0..vkwatch:999999 is not there") {
		t.Fatalf("Bench without the keyspace: %v", err)
	}
	if n := c.DBSize(ctx).Val(); n != 150000 {
		t.Errorf("DBSIZE %d after a refused bench, want 150000", n)
	}
	if stats := c.Info(ctx, "commandstats").Val(); strings.Contains(stats, "cmdstat_set:") {
		t.Errorf("a refused bench ran SET:\n%s", stats)
	}
}

// TestBenchShowsDatasetPerRun: a dataset that changes between runs (here
// another client adds keys after run 1) shows in each run's figures.
func TestBenchShowsDatasetPerRun(t *testing.T) {
	srvs, eps := startDelayed(t, 1, 100)
	c := servertest.Client(t, srvs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var grew error
	sums, err := Bench(ctx, Config{
		Endpoints: eps, Runs: 2, Window: 1500 * time.Millisecond, TriggerAt: 300 * time.Millisecond,
		Writers: 2, Keys: 5000, Preload: true,
		Progress: func(m string) {
			if strings.Contains(m, " run 1/2: dataset ") { // run 1's result line
				grew = c.Do(ctx, "DEBUG", "POPULATE", "7000", "other", "300").Err()
			}
		},
	})
	if err != nil || grew != nil {
		t.Fatalf("Bench: %v; adding keys: %v", err, grew)
	}
	r1, r2 := sums[0].Runs[0], sums[0].Runs[1]
	if r1.DatasetKeys != 5000 || r2.DatasetKeys != 12000 || r2.UsedMemory <= r1.UsedMemory+7000*300 {
		t.Errorf("run 1: %d keys, %d B; run 2: %d keys, %d B; want 5000 then 12000, and 7000 x 300 B more", r1.DatasetKeys, r1.UsedMemory, r2.DatasetKeys, r2.UsedMemory)
	}
	if st := sums[0].DatasetKeys; st.Min != 5000 || st.Max != 12000 {
		t.Errorf("dataset keys stat %+v", st)
	}
}

func TestConfigErrors(t *testing.T) {
	ep := source.Endpoint{Network: "tcp", Addr: "127.0.0.1:1"}
	for name, cfg := range map[string]Config{
		"none":    {},
		"three":   {Endpoints: []source.Endpoint{ep, ep, ep}},
		"trigger": {Endpoints: []source.Endpoint{ep}, Window: time.Second, TriggerAt: 2 * time.Second},
		"runs":    {Endpoints: []source.Endpoint{ep}, Runs: -1},
	} {
		if _, err := Bench(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEstimateP99(t *testing.T) {
	one := source.Latency{Count: 500, Min: 100 * time.Microsecond, P50: 200 * time.Microsecond, P99: 900 * time.Microsecond, Max: 5 * time.Millisecond}
	if got := estimateP99([]source.Latency{one}); absDur(got-one.P99) > time.Microsecond {
		t.Errorf("one interval: %s, want its p99 %s", got, one.P99)
	}
	slow := source.Latency{Count: 500, Min: time.Millisecond, P50: 2 * time.Millisecond, P99: 8 * time.Millisecond, Max: 20 * time.Millisecond}
	got := estimateP99([]source.Latency{one, slow, {}})
	if got <= one.P99 || got >= slow.P99 {
		t.Errorf("mixture p99 %s outside (%s, %s)", got, one.P99, slow.P99)
	}
	if estimateP99(nil) != 0 {
		t.Error("no PINGs: want 0")
	}
	flat := source.Latency{Count: 10, Min: time.Millisecond, P50: time.Millisecond, P99: time.Millisecond, Max: time.Millisecond}
	if got := estimateP99([]source.Latency{flat}); absDur(got-time.Millisecond) > time.Microsecond {
		t.Errorf("constant latency: %s", got)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestBenchParallel runs both servers at once: their saves overlap in time.
func TestBenchParallel(t *testing.T) {
	_, eps := startDelayed(t, 2, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sums, err := Bench(ctx, Config{
		Endpoints: eps,
		Runs:      1,
		Window:    2 * time.Second,
		TriggerAt: 300 * time.Millisecond,
		Writers:   2,
		Keys:      5000,
		Preload:   true,
		Parallel:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := sums[0].Runs[0].Report, sums[1].Runs[0].Report
	if ra.Started >= rb.Ended || rb.Started >= ra.Ended {
		t.Errorf("saves did not overlap: %s-%s and %s-%s", ra.Started, ra.Ended, rb.Started, rb.Ended)
	}
	for i, s := range sums {
		if r := s.Runs[0]; r.Report.COW != r.ServerCOW || !r.ServerCOW.OK {
			t.Errorf("server %d: report COW %v, server %v", i, r.Report.COW, r.ServerCOW)
		}
	}
}

// The case: a save of well under a second, which INFO's
// current_cow_size (refreshed about once a second) never sees, read 0 as
// bench's peak live copy-on-write. With /proc it is the child's dirty
// pages; without, it is absent: never a false 0.
func TestBenchPeakLiveNeverAFalseZero(t *testing.T) {
	s := servertest.StartDefault(t)
	proc, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := Config{
		Endpoints: []source.Endpoint{sourcetest.Endpoint(t, s.Addr)}, Runs: 1, Window: 2 * time.Second, TriggerAt: 500 * time.Millisecond,
		Writers: 2, Keys: 100_000, Preload: true, Interval: 50 * time.Millisecond,
	}
	for _, withProc := range []bool{false, true} {
		cfg.Proc = nil
		if withProc {
			cfg.Proc = proc.Read
		}
		sums, err := Bench(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Preload = false
		r := sums[0].Runs[0]
		var js bytes.Buffer
		if err := result.WriteJSON(&js, sums); err != nil {
			t.Fatal(err)
		}
		var back struct {
			Servers []struct {
				Runs []struct {
					PeakLive     *int64 `json:"peak_live_cow_bytes"`
					PeakLiveFrom string `json:"peak_live_cow_from"`
					PeakInfo     *int64 `json:"peak_current_cow_size_bytes"`
				}
			}
		}
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		got := back.Servers[0].Runs[0]
		t.Logf("/proc %v: save %s, server COW %v, peak live %v from %q, INFO's %v", withProc, r.Report.Observed, r.ServerCOW,
			deref(got.PeakLive), got.PeakLiveFrom, deref(got.PeakInfo))
		if r.ServerCOW.V == 0 {
			t.Fatal("the save copied nothing under two writers: nothing to check")
		}
		for name, v := range map[string]*int64{"peak_live_cow_bytes": got.PeakLive, "peak_current_cow_size_bytes": got.PeakInfo} {
			if v != nil && *v == 0 {
				t.Errorf("/proc %v: %s is 0 for a save that copied %v bytes", withProc, name, r.ServerCOW)
			}
		}
		if withProc && (got.PeakLive == nil || got.PeakLiveFrom != "proc") {
			t.Errorf("with /proc: peak live %v from %q, want the child's dirty pages", deref(got.PeakLive), got.PeakLiveFrom)
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

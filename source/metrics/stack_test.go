package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/metrics/promtest"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// stackThresholds are the rules' thresholds in the stack's Prometheus:
// the shipped rules (the same template, DefaultThresholds' numbers
// shortened) so that each alert fires within the test's seconds. The
// shipped numbers themselves are checked by promtool's rule unit tests
// (TestShippedRulesFireAtTheirThresholds).
var stackThresholds = Thresholds{DownFor: "0s", HeadroomFor: "0s", StallSeconds: 2, COWShare: 0.02}

// stack is a real server watched by vkwatch's fleet with the exporter on
// loopback (its probe counting into the exporter's histogram, as with
// --metrics), and two real Prometheus scraping it every 100 ms: native
// with native histograms and the alert rules, classic with classic
// histograms only (an older Prometheus, or one not asked for native ones).
type stack struct {
	ctx     context.Context
	srv     *server.Server
	adm     *redis.Client
	f       *fleet.Fleet
	node    source.NodeID
	addr    string
	metrics string // the exporter's host:port
	native  *promtest.Server
	classic *promtest.Server
	start   time.Time

	mu      sync.Mutex
	reports []source.SaveReport
	child   int64 // the save child's pid, as /proc last showed one
}

// saveKeys and saveDelayUS make a fork save of about 4 s: long enough for
// the save's progress to give an ETA (the child reports once a second).
const (
	saveKeys    = 40000
	saveDelayUS = 100
)

func startStack(t *testing.T) *stack {
	srv, adm := servertest.StartSlowSave(t, saveKeys, 300, saveDelayUS)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	exp := New("")
	ms, err := Listen("127.0.0.1:0", exp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ms.Close(); err != nil {
			t.Errorf("close metrics server: %v", err)
		}
	})
	s := &stack{ctx: ctx, srv: srv, adm: adm, addr: srv.Addr, metrics: ms.Addr(), start: time.Now()}
	s.native = promtest.Start(t, promtest.Config{Targets: []string{ms.Addr()}, Native: true, Rules: Rules(stackThresholds)})
	s.classic = promtest.Start(t, promtest.Config{Targets: []string{ms.Addr()}, Consoles: t.TempDir()})
	pr, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	ep := sourcetest.Endpoint(t, srv.Addr)
	s.node = ep.Node()
	s.f = fleet.NewList([]fleet.Member{{ID: ep.Node(), Endpoint: ep}}, fleet.Config{
		Watch: watch.Config{Interval: 100 * time.Millisecond},
		Configure: func(m fleet.Member, cfg *watch.Config) {
			cfg.Proc = pr.Read
			cfg.PingHistogram = exp.PingHistogram(m.ID)
		},
	})
	t.Cleanup(func() { s.f.Close() })
	if _, err := s.f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	wg.Go(func() { s.f.Run(runCtx, func(ev source.Event) { exp.Observe(ev); s.keep(ev) }) })
	return s
}

// keep remembers the reports and the save child's pid.
func (s *stack) keep(ev source.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ev.Kind == source.EventSaveEnded && ev.Report != nil:
		s.reports = append(s.reports, *ev.Report)
	case ev.Kind == source.EventSaveStarted:
		s.child = 0 // a pid from now on is this save's
	}
	if ev.Sample != nil && ev.Sample.Proc.ChildPID.OK {
		s.child = ev.Sample.Proc.ChildPID.V
	}
}

// report waits for the n-th save report.
func (s *stack) report(t *testing.T, n int, within time.Duration) source.SaveReport {
	t.Helper()
	servertest.WaitFor(t, within, fmt.Sprintf("save report %d", n), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.reports) >= n
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reports[n-1]
}

// sel is a label selector of the stack's server.
func (s *stack) sel(extra ...string) string {
	return "{" + strings.Join(append([]string{fmt.Sprintf("addr=%q", s.addr)}, extra...), ",") + "}"
}

// TestPrometheusStack runs the whole stack against a real server: a fork
// save under writes, then a save that stalls and is killed, a memory
// limit a fork would exceed and the server killed. Prometheus must hold
// what the exporter says of each, both histograms, and fire each alert;
// the exposition must pass promtool check metrics; every query of the
// dashboard must return data from both Prometheus (TestDashboardQueries'
// part, with the picture).
func TestPrometheusStack(t *testing.T) {
	s := startStack(t)
	rep := s.forkSave(t)
	s.checkHistograms(t, rep)
	s.checkExposition(t)
	if a := s.native.Fired(t, "VkwatchCopyOnWriteHigh", time.Minute); a["addr"] != s.addr || a["instrument"] != "proc" {
		t.Errorf("VkwatchCopyOnWriteHigh fired with labels %v", a)
	}
	s.stuckSave(t)
	s.forkWouldExceed(t)
	s.checkDashboard(t)
	s.checkReadmeQueries(t)
	s.nodeDown(t)
}

// forkSave runs a BGSAVE under writes and checks what Prometheus holds of
// it against the report and the server's own rdb_last_cow_size.
func (s *stack) forkSave(t *testing.T) source.SaveReport {
	p := s.native
	// The footprint before the save, once Prometheus has it.
	p.One(t, "vkwatch_footprint_bytes"+s.sel(), time.Minute)
	if r := s.f.Do(s.ctx, s.node, "BGSAVE"); !r.OK() {
		t.Fatalf("BGSAVE: %s", r.Err)
	}
	// Overwrite the keys while the child saves: the pages the parent
	// writes are copied, which is the cost under test.
	writeCtx, stopWrites := context.WithCancel(s.ctx)
	var ww sync.WaitGroup
	ww.Go(func() { overwrite(writeCtx, s.adm, saveKeys) })
	rep := s.report(t, 1, time.Minute)
	stopWrites()
	ww.Wait()

	lastCOW := servertest.InfoInt(t, s.adm, "persistence", "rdb_last_cow_size")
	if lastCOW <= 0 {
		t.Fatalf("rdb_last_cow_size is %d: the writes made no copy-on-write to compare", lastCOW)
	}
	fork := s.sel(`kind="bgsave"`, `method="fork"`)
	if got := p.One(t, "vkwatch_last_save_cow_bytes"+fork, time.Minute); int64(got.Value) != lastCOW {
		t.Errorf("Prometheus has vkwatch_last_save_cow_bytes %v, the server's rdb_last_cow_size is %d", got.Value, lastCOW)
	}
	if st := p.One(t, "vkwatch_last_save_status"+s.sel(`status="ok"`), time.Minute); st.Value != 1 {
		t.Errorf("vkwatch_last_save_status{status=ok} %v after a save that succeeded", st.Value)
	}
	if n := p.One(t, "vkwatch_saves_total"+s.sel(`kind="bgsave"`, `method="fork"`, `status="ok"`), time.Minute); n.Value != 1 {
		t.Errorf("vkwatch_saves_total{status=ok} %v after one save", n.Value)
	}
	rise := p.One(t, "vkwatch_last_save_footprint_rise_bytes"+fork, time.Minute)
	want, ok := rep.PeakFootprintDelta.Get()
	if !ok || want <= 0 || int64(rise.Value) != want || rise.Labels["instrument"] != string(source.FromProc) {
		t.Errorf("footprint rise %v %v, the report's %v (instrument proc)", rise.Value, rise.Labels, rep.PeakFootprintDelta)
	}
	if v := p.One(t, "max_over_time(vkwatch_save_in_progress"+s.sel()+"[5m])", time.Minute); v.Value != 1 {
		t.Errorf("Prometheus never saw vkwatch_save_in_progress at 1 (max %v)", v.Value)
	}
	prog := p.One(t, "max_over_time(vkwatch_save_progress_ratio"+s.sel(`trigger="vkwatch"`)+"[5m])", time.Minute)
	if prog.Value <= 0 || prog.Value > 1 || prog.Labels["kind"] != "bgsave" || prog.Labels["method"] != "fork" {
		t.Errorf("max progress %v %v: want in (0, 1] of a bgsave by fork that vkwatch started", prog.Value, prog.Labels)
	}
	p.One(t, "max_over_time(vkwatch_save_eta_seconds"+s.sel()+"[5m])", time.Minute)
	if d := p.One(t, "vkwatch_last_save_duration_seconds"+fork, time.Minute); d.Value <= 1 {
		t.Errorf("save duration %v s, want about 4 s", d.Value)
	}
	return rep
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

// checkHistograms: the PING histogram is in both Prometheus, native in
// one and classic in the other, counting since the start and holding the
// save's worst PING in a bucket at or above it.
func (s *stack) checkHistograms(t *testing.T, rep source.SaveReport) {
	worst := rep.PingDuring.Max.Seconds()
	if rep.PingDuring.Count == 0 || worst <= 0 {
		t.Fatalf("the save's report has no PING: %+v", rep.PingDuring)
	}
	// A round trip is counted in whole microseconds: its bucket's upper
	// bound may be up to 1 µs below the exact worst.
	worst -= 1e-6
	native := s.native.One(t, "histogram_count(vkwatch_ping_duration_seconds"+s.sel()+")", time.Minute)
	if native.Value <= 0 {
		t.Errorf("native histogram count %v", native.Value)
	}
	// The histograms count since the exporter started, so the save's worst
	// PING is in them once a scrape after it has landed: wait for that
	// scrape (100 ms apart), then the highest bucket ends at or above it.
	// The raw counts, not increase(), whose extrapolation may round a
	// single observation in the top bucket away.
	s.native.Reaches(t, "histogram_quantile(1, vkwatch_ping_duration_seconds"+s.sel()+")", worst, "the native histogram's highest bucket")
	servertest.WaitFor(t, time.Minute, "the classic buckets", func() bool {
		return len(s.classic.Query(t, "vkwatch_ping_duration_seconds_bucket"+s.sel())) == len(classicBounds)+1
	})
	s.classic.Reaches(t, "histogram_quantile(1, vkwatch_ping_duration_seconds_bucket"+s.sel()+")", worst, "the classic histogram's highest bucket")
	// +Inf and _count in one query, so both are read at the same instant
	// (two queries may fall on either side of a scrape).
	if d := s.classic.One(t, `vkwatch_ping_duration_seconds_bucket`+s.sel(`le="+Inf"`)+` - ignoring(le) vkwatch_ping_duration_seconds_count`+s.sel(), time.Minute); d.Value != 0 {
		t.Errorf("+Inf bucket minus count: %v, want 0", d.Value)
	}
	if nat := s.native.Query(t, "vkwatch_ping_duration_seconds_bucket"); len(nat) != 0 {
		t.Errorf("the native Prometheus holds classic buckets too (%d series): it should keep the native ones only", len(nat))
	}
}

// checkExposition: the exposition as a scraper reads it passes promtool
// check metrics (Prometheus' own lint of names, units, help and types).
func (s *stack) checkExposition(t *testing.T) {
	resp, err := http.Get("http://" + s.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := promtool(t, t.TempDir(), body, "check", "metrics"); err != nil || out != "" {
		t.Errorf("promtool check metrics: %v\n%s\nof:\n%s", err, out, body)
	}
	for _, family := range []string{"vkwatch_build_info", "vkwatch_ping_duration_seconds_bucket", "vkwatch_last_save_status",
		"vkwatch_forecast_cow_bytes", "vkwatch_fork_headroom_bytes", "vkwatch_saves_total"} {
		if !strings.Contains(string(body), "\n"+family+"{") {
			t.Errorf("the exposition has no %s:\n%s", family, body)
		}
	}
}

// stuckSave starts a save that makes no progress (a second per key: the
// child reports its first progress after 1024 keys), waits for
// VkwatchSaveStuck, then kills the save's child, and waits for
// VkwatchSaveFailed.
func (s *stack) stuckSave(t *testing.T) {
	if err := s.adm.ConfigSet(s.ctx, "rdb-key-save-delay", "1000000").Err(); err != nil {
		t.Fatal(err)
	}
	if r := s.f.Do(s.ctx, s.node, "BGSAVE"); !r.OK() {
		t.Fatalf("BGSAVE: %s", r.Err)
	}
	a := s.native.Firing(t, "VkwatchSaveStuck", time.Minute)
	want := map[string]string{"addr": s.addr, "kind": "bgsave", "method": "fork", "trigger": "vkwatch", "severity": "warning"}
	for k, v := range want {
		if a.Labels[k] != v {
			t.Errorf("VkwatchSaveStuck's %s is %q, want %q (%v)", k, a.Labels[k], v, a.Labels)
		}
	}
	if v, err := strconv.ParseFloat(a.Value, 64); err != nil || v < stackThresholds.StallSeconds {
		t.Errorf("VkwatchSaveStuck fired at %q s of stall, under the %v s threshold", a.Value, stackThresholds.StallSeconds)
	}
	var pid int64
	servertest.WaitFor(t, time.Minute, "the stuck save's child in /proc", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		pid = s.child
		return pid > 0
	})
	if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
		t.Fatalf("kill the save child %d: %v", pid, err)
	}
	if rep := s.report(t, 2, time.Minute); rep.Status != source.StatusErr {
		t.Errorf("the killed save's status is %q, want err", rep.Status)
	}
	failed := s.native.Firing(t, "VkwatchSaveFailed", time.Minute)
	if failed.Labels["addr"] != s.addr || failed.Labels["kind"] != "bgsave" || failed.Labels["method"] != "fork" {
		t.Errorf("VkwatchSaveFailed labels %v", failed.Labels)
	}
	if n := s.native.One(t, "vkwatch_saves_total"+s.sel(`method="fork"`, `kind="bgsave"`, `status="err"`), time.Minute); n.Value != 1 {
		t.Errorf("vkwatch_saves_total{status=err} %v after one failed save", n.Value)
	}
}

// forkWouldExceed sets maxmemory just above used_memory: a fork with the
// copy-on-write of the first save would pass it.
func (s *stack) forkWouldExceed(t *testing.T) {
	limit := servertest.InfoInt(t, s.adm, "memory", "used_memory") + 64<<10
	if err := s.adm.ConfigSet(s.ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	a := s.native.Firing(t, "VkwatchForkWouldExceedMemory", time.Minute)
	if a.Labels["limit"] != "maxmemory" || a.Labels["addr"] != s.addr || a.Labels["severity"] != "critical" {
		t.Errorf("VkwatchForkWouldExceedMemory labels %v", a.Labels)
	}
	if got := s.native.One(t, "vkwatch_fork_limit_bytes"+s.sel(`limit="maxmemory"`), time.Minute); int64(got.Value) != limit {
		t.Errorf("vkwatch_fork_limit_bytes{limit=maxmemory} %v, maxmemory is %d", got.Value, limit)
	}
}

// nodeDown kills the server: vkwatch cannot reach it.
func (s *stack) nodeDown(t *testing.T) {
	if err := s.srv.Kill(); err != nil {
		t.Fatal(err)
	}
	a := s.native.Firing(t, "VkwatchNodeDown", time.Minute)
	if a.Labels["addr"] != s.addr || a.Labels["severity"] != "critical" {
		t.Errorf("VkwatchNodeDown labels %v", a.Labels)
	}
}

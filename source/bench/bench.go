// Package bench reproduces, without a UI, the experiment users run to see
// what a save costs (shared/seeds: forkless BGSAVE article): against one or
// two servers, keep a fixed number of writers SETting random keys of a
// preloaded keyspace, PING every 2 ms from a separate connection, fire
// BGSAVE a couple of seconds into a fixed window, and repeat. Per run it
// collects the save's report (copy-on-write, memory, duration), the writers'
// throughput over the window and the worst and 99th percentile PING; per
// server it summarises the runs as mean / min / max.
//
// Everything is measured by the same watch.Watcher the UI uses, so the
// numbers bench prints are the numbers vkwatch shows.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/watch"
)

// Target is one server the experiment runs on. On a cluster a replica
// takes no writes: the writers write to its primary, under a prefix whose
// keys all hash to the shard's slots, and the replica gets them by
// replication, as it would in production.
type Target struct {
	Save source.Endpoint // where BGSAVE goes and the watcher looks
	// Write is where the writers write (and the dataset is loaded); zero:
	// Save. Prefix is their key prefix; empty: load.DefaultPrefix.
	Write  source.Endpoint
	Prefix string
	// Node is the node id events carry; empty: Save's address.
	Node source.NodeID
	// Label says what the server is, for the table ("replica of
	// 10.0.0.7:6379, slots 0-5460"); may be empty.
	Label string
}

// Config says what to run. Zero fields take the seed experiment's values.
type Config struct {
	// Endpoints are plain servers, each its own target; Targets, when
	// given, replace them.
	Endpoints []source.Endpoint
	Targets   []Target
	Runs      int           // runs per server; default 7
	Window    time.Duration // length of one run; default 12s
	TriggerAt time.Duration // when in the window BGSAVE is sent; default 2s
	Writers   int           // concurrent SET connections; default 8
	Keys      int           // keyspace of the vkwatch-prefixed dataset; default 1_000_000
	ValueSize int           // bytes per value; default 300
	Preload   bool          // create the dataset first
	Parallel  bool          // run the servers at once instead of one after the other
	// Methods, when given, saves one server each of these ways
	// (bgsave-default-method: fork, forkless), its runs alternating
	// between them, Runs of each: bench sets the method before each run
	// and reads it back, and puts the server's own setting back at the
	// end, whatever ends it (trying for RestoreWithin, default
	// DefaultRestoreWithin, over new connections if need be). A server
	// that cannot be set each way is refused before anything is written.
	Methods       []string
	RestoreWithin time.Duration
	// Interval is how often INFO is sampled (default 150ms, like the seed's
	// cgroup sampling); PingInterval how often PING probes (default 2ms).
	Interval, PingInterval time.Duration
	// Progress receives human progress lines (for stderr); may be nil.
	Progress func(msg string)
	// Events receives every watcher event (for --record); may be nil. With
	// Parallel it is called from several goroutines at once.
	Events func(source.Event)
	// Clock is the run clock events are timed by; nil: a new one. Pass the
	// clock whose epoch a recording's header holds.
	Clock *source.Clock
	// Proc, when set, reads a local server's memory from /proc
	// (procmem.Reader.Read): the memory delta then counts the save child's
	// own copy-on-write pages, as the seed's cgroup did.
	Proc func(pid int64) source.ProcMem
	// Sched, when set, reads a local server's main thread from /proc
	// (procmem.Reader.Sched), to explain the runs' PING spikes.
	Sched func(pid int64, at time.Duration, wchan bool) source.ProcSched
}

// Defaults of Config's zero fields.
const (
	DefaultRuns         = 7
	DefaultWindow       = 12 * time.Second
	DefaultTriggerAt    = 2 * time.Second
	DefaultWriters      = 8
	DefaultKeys         = 1_000_000
	DefaultValueSize    = 300
	DefaultInterval     = 150 * time.Millisecond
	DefaultPingInterval = 2 * time.Millisecond
)

func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Runs, DefaultRuns)
	def(&c.Writers, DefaultWriters)
	def(&c.Keys, DefaultKeys)
	def(&c.ValueSize, DefaultValueSize)
	defd(&c.Window, DefaultWindow)
	defd(&c.TriggerAt, DefaultTriggerAt)
	defd(&c.Interval, DefaultInterval)
	defd(&c.PingInterval, DefaultPingInterval)
	defd(&c.RestoreWithin, DefaultRestoreWithin)
	if c.Clock == nil {
		c.Clock = source.NewClock()
	}
	if len(c.Targets) == 0 {
		for _, ep := range c.Endpoints {
			c.Targets = append(c.Targets, Target{Save: ep})
		}
	}
	for i := range c.Targets {
		t := &c.Targets[i]
		if t.Write.Addr == "" {
			t.Write = t.Save
		}
		if t.Prefix == "" {
			t.Prefix = load.DefaultPrefix
		}
		if t.Node == "" {
			t.Node = t.Save.Node()
		}
	}
	switch {
	case len(c.Targets) == 0 && len(c.Endpoints) == 0:
		return c, errors.New("bench: no server to run on")
	case c.Runs < 0 || c.Writers < 0 || c.Keys < 0 || c.ValueSize < 0:
		return c, errors.New("bench: runs, writers, keys and value size cannot be negative")
	case c.Window < 0 || c.TriggerAt < 0 || c.Interval < 0 || c.PingInterval < 0:
		return c, errors.New("bench: durations cannot be negative")
	case c.TriggerAt >= c.Window:
		return c, fmt.Errorf("bench: the trigger (%s) must come before the window ends (%s)", c.TriggerAt, c.Window)
	}
	return c, c.checkMethods()
}

// bencher holds what the runs of one Bench share, by target.
type bencher struct {
	cfg     Config
	opts    []*redis.Options // of the writers' server
	admin   []*redis.Client  // of the server saving
	names   []string
	progMu  sync.Mutex
	summary []result.Summary
	// runs is how many runs each server has: Runs of each method.
	runs int
	// methods changes the one server's method (Config.Methods); nil
	// without.
	methods *methodGuard
}

func (b *bencher) progress(format string, a ...any) {
	if b.cfg.Progress == nil {
		return
	}
	b.progMu.Lock()
	defer b.progMu.Unlock()
	b.cfg.Progress(fmt.Sprintf(format, a...))
}

// Bench runs the experiment and returns one result.Summary per target, in the
// order of cfg.Targets (or cfg.Endpoints). It refuses to start a run on a server where a
// save or AOF rewrite is already running. The dataset (keys with
// load.DefaultPrefix) is left in place for the next bench.
func Bench(ctx context.Context, cfg Config) (sums []result.Summary, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &bencher{cfg: cfg, runs: cfg.Runs * max(1, len(cfg.Methods))}
	defer func() {
		for _, c := range b.admin {
			c.Close()
		}
	}()
	for i, t := range cfg.Targets {
		wopts, err := watch.RedisOptions(t.Write)
		if err != nil {
			return nil, fmt.Errorf("server %s: %w", t.Write.String(), err)
		}
		sopts, err := watch.RedisOptions(t.Save)
		if err != nil {
			return nil, fmt.Errorf("server %s: %w", t.Save.String(), err)
		}
		b.opts = append(b.opts, wopts)
		b.admin = append(b.admin, redis.NewClient(sopts))
		b.names = append(b.names, t.Save.String())
		b.summary = append(b.summary, result.Summary{Server: i, Addr: t.Save.String(), Label: t.Label})
	}
	// Fail fast, before any loading, on a server that is busy saving or
	// cannot be reached.
	for i := range cfg.Targets {
		if _, err := b.checkIdle(ctx, i); err != nil {
			return nil, fmt.Errorf("%s: %w", b.names[i], err)
		}
	}
	if len(cfg.Methods) > 0 {
		g, aerr := b.armMethods(ctx, 0)
		if g != nil {
			// Whatever ends the bench from here, the server's own method
			// goes back; the runs' results are kept if it cannot.
			defer func() { err = g.restore(ctx, err) }()
		}
		if aerr != nil {
			return nil, fmt.Errorf("%s: %w", b.names[0], aerr)
		}
		b.methods = g
	}
	if cfg.Preload {
		if err := b.each(ctx, true, b.preload); err != nil {
			return nil, err
		}
	}
	// The writers only overwrite keys that exist: refuse, before writing
	// anything, a server where their keyspace is missing.
	for i, t := range cfg.Targets {
		k, err := load.CheckKeyspace(ctx, b.opts[i], b.loadConfig(i))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Write, err)
		}
		if err := k.Check(t.Write.String()); err != nil {
			return nil, err
		}
	}
	if err := b.each(ctx, cfg.Parallel, b.runAll); err != nil {
		return nil, err
	}
	if len(cfg.Methods) > 0 {
		b.summary = byMethod(b.summary[0], cfg.Methods)
	}
	for i := range b.summary {
		b.summary[i].Summarise()
	}
	return b.summary, nil
}

// each calls f for every server, one after the other or all at once. The
// first error ends the others.
func (b *bencher) each(ctx context.Context, parallel bool, f func(ctx context.Context, srv int) error) error {
	if !parallel {
		for i := range b.cfg.Targets {
			if err := f(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(b.cfg.Targets))
	var wg sync.WaitGroup
	for i := range b.cfg.Targets {
		wg.Go(func() {
			if errs[i] = f(ctx, i); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	// Report the cause rather than a sibling's "context canceled".
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

func (b *bencher) loadConfig(srv int) load.Config {
	return load.Config{Prefix: b.cfg.Targets[srv].Prefix, Keys: b.cfg.Keys, ValueSize: b.cfg.ValueSize, Writers: b.cfg.Writers}
}

func (b *bencher) preload(ctx context.Context, srv int) error {
	// Targets that share a writers' server and prefix (a primary and its
	// replicas) share one dataset: load it once, for the first of them.
	t := b.cfg.Targets[srv]
	for _, o := range b.cfg.Targets[:srv] {
		if o.Write.Addr == t.Write.Addr && o.Write.Network == t.Write.Network && o.Prefix == t.Prefix {
			return nil
		}
	}
	name := t.Write.String()
	b.progress("%s: loading %d keys of %d bytes", name, b.cfg.Keys, b.cfg.ValueSize)
	last := -1
	err := load.Preload(ctx, b.opts[srv], b.loadConfig(srv), func(done, total int) {
		if total == 0 {
			return
		}
		// A line per 10%: enough to show life, few enough for a log.
		if pct := done * 10 / total; pct != last {
			last = pct
			b.progress("%s: loaded %d/%d keys", name, done, total)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: preload: %w", name, err)
	}
	return nil
}

func (b *bencher) runAll(ctx context.Context, srv int) error {
	var cals []forecast.Calibration
	for n := 1; n <= b.runs; n++ {
		asked := ""
		if ms := b.cfg.Methods; len(ms) > 0 {
			// Alternate: fork, forkless, fork, ... on the same data, so
			// that a drift of the host or the dataset falls on both.
			asked = ms[(n-1)%len(ms)]
			if err := b.methods.set(ctx, asked); err != nil {
				return fmt.Errorf("%s run %d/%d: %w", b.names[srv], n, b.runs, err)
			}
		}
		r, err := b.run(ctx, srv, n)
		if err != nil {
			return fmt.Errorf("%s run %d/%d: %w", b.names[srv], n, b.runs, err)
		}
		r.Asked = asked
		if r.Forced() {
			b.progress("%s run %d/%d: asked forkless, the server forked (rdb_current_bgsave_type fork: "+
				"a loaded module cannot save forklessly): a fork run", b.names[srv], n, b.runs)
		}
		cals = judge(&r, cals)
		b.summary[srv].Runs = append(b.summary[srv].Runs, r)
		b.progress("%s run %d/%d: %s", b.names[srv], n, b.runs, result.RunLine(r))
	}
	return nil
}

// byMethod splits one server's runs into a column per method its saves
// ran by, in the order of methods: a run asked forkless that forked is a
// fork run. A method no save ran by has no column.
func byMethod(s result.Summary, methods []string) []result.Summary {
	var out []result.Summary
	for _, m := range methods {
		col := s
		col.Method, col.Runs = m, nil
		for _, r := range s.Runs {
			if r.Report.Kind.Method() == m {
				col.Runs = append(col.Runs, r)
			}
		}
		if len(col.Runs) > 0 {
			out = append(out, col)
		}
	}
	return out
}

// persistence reads INFO persistence as field -> value. Errors of it and of
// checkIdle leave the server's name to the caller.
func (b *bencher) persistence(ctx context.Context, srv int) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := b.admin[srv].Info(ctx, "persistence").Result()
	if err != nil {
		return nil, fmt.Errorf("INFO persistence: %w", err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// checkIdle refuses a server that is saving already: a run on top of a
// running save measures neither. It returns INFO persistence.
func (b *bencher) checkIdle(ctx context.Context, srv int) (map[string]string, error) {
	p, err := b.persistence(ctx, srv)
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"rdb_bgsave_in_progress", "aof_rewrite_in_progress"} {
		if p[f] == "1" {
			return nil, fmt.Errorf("a save is already running (%s:1); wait for it to end before bench", f)
		}
	}
	return p, nil
}

// dataset reads DBSIZE and INFO memory (parsed by source.ParseInfo) in one
// round trip; an INFO without used_memory is an error.
func (b *bencher) dataset(ctx context.Context, srv int) (keys int64, mem source.Info, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var size *redis.IntCmd
	var info *redis.StringCmd
	if _, err := b.admin[srv].Pipelined(ctx, func(p redis.Pipeliner) error {
		size, info = p.DBSize(ctx), p.Info(ctx, "memory")
		return nil
	}); err != nil {
		return 0, mem, fmt.Errorf("DBSIZE and INFO memory: %w", err)
	}
	if mem = source.ParseInfo(info.Val()); !mem.UsedMemory.OK {
		return 0, mem, errors.New("INFO memory has no used_memory")
	}
	return size.Val(), mem, nil
}

// run is one run on one server: the dataset as it begins, the writers and
// a watcher started, the window measured, then what the server itself
// says the save cost.
func (b *bencher) run(ctx context.Context, srv, runNo int) (result.Run, error) {
	if _, err := b.checkIdle(ctx, srv); err != nil {
		return result.Run{}, err
	}
	r := result.Run{Server: srv, N: runNo}
	var err error
	var mem source.Info
	if r.DatasetKeys, mem, err = b.dataset(ctx, srv); err != nil {
		return result.Run{}, err
	}
	r.UsedMemory, r.AllocatorFree = mem.UsedMemory.V, mem.AllocatorRSS
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	wr, err := load.StartWriters(runCtx, b.opts[srv], b.loadConfig(srv))
	if err != nil {
		return result.Run{}, fmt.Errorf("start writers: %w", err)
	}
	defer wr.Stop()
	wt, err := b.watch(runCtx, srv, wr.Ops)
	if err != nil {
		return result.Run{}, err
	}
	defer wt.stop()

	c := &collector{}
	if err := wt.firstSample(ctx, c); err != nil {
		return result.Run{}, err
	}
	win := &window{b: b, srv: srv, runNo: runNo, w: wt.w, wr: wr, c: c}
	if err := win.measure(ctx, runCtx, wt.events); err != nil {
		return result.Run{}, err
	}
	wr.Stop()
	wt.stop()
	b.writerNotes(srv, runNo, wr)
	r.WriterMisses = wr.Misses()
	r.WriterOps, r.RateBefore, r.PeakBefore = win.writerOps, win.rateBefore, win.peakBefore
	r.Report = *win.report
	r.WorstPing, r.P99Ping = c.ping(win.t0, win.tEnd)
	r.WorstSpike = c.spikeOf(r.WorstPing)
	r.MemDelta = c.memDelta(win.report)
	if s := c.lastBefore(win.sent); s != nil {
		r.Limits = result.LimitsOf(risk.Limits(s))
	}
	if err := b.serverSaid(ctx, srv, &r); err != nil {
		return result.Run{}, err
	}
	return r, nil
}

// watching is a run's watcher, running, and the events it emits.
type watching struct {
	w      *watch.Watcher
	events chan source.Event
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// watch connects a watcher to the server srv saves on and runs it until
// stop; the writers' ops give the samples their writer rate.
func (b *bencher) watch(ctx context.Context, srv int, writerOps func() uint64) (*watching, error) {
	cfg := b.cfg
	w := watch.New(cfg.Targets[srv].Node, cfg.Targets[srv].Save, cfg.Clock, watch.Config{
		Interval:     cfg.Interval,
		PingInterval: cfg.PingInterval,
		WriterOps:    writerOps,
		Proc:         cfg.Proc,
		Sched:        cfg.Sched,
	})
	if _, err := w.Connect(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	// The watcher's callback must not block for long: the run reads
	// continuously, and the buffer covers a BGSAVE round trip.
	wt := &watching{w: w, events: make(chan source.Event, 4096)}
	watchCtx, cancel := context.WithCancel(ctx)
	wt.cancel = cancel
	wt.wg.Go(func() {
		w.Run(watchCtx, func(ev source.Event) {
			if cfg.Events != nil {
				cfg.Events(ev)
			}
			select {
			case wt.events <- ev:
			case <-watchCtx.Done():
			}
		})
	})
	return wt, nil
}

// stop ends Run, waits for it and closes the watcher; it may be called
// again.
func (wt *watching) stop() {
	wt.cancel()
	wt.wg.Wait()
	wt.w.Close()
}

// firstSample waits for the first sample, the moment sampling and PING
// probing are demonstrably live: the window starts there.
func (wt *watching) firstSample(ctx context.Context, c *collector) error {
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for len(c.samples) == 0 {
		select {
		case ev := <-wt.events:
			c.add(ev)
		case <-deadline.C:
			return fmt.Errorf("no sample within 30s of connecting (%s)", c.lastErr)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// window is one run's measuring window: BGSAVE goes out TriggerAt into
// it, the writers' throughput is taken when it closes, and it lasts until
// the save's report has come as well.
type window struct {
	b          *bencher
	srv, runNo int
	w          *watch.Watcher
	wr         *load.Writers
	c          *collector

	t0, tEnd  time.Duration
	ops0      uint64
	writerOps float64
	sent      time.Duration // when BGSAVE went out; -1 before
	// rateBefore and peakBefore are the writers' mean and highest SETs/s
	// before the BGSAVE (Run.RateBefore), from their counts at each
	// sample (opsAt).
	rateBefore, peakBefore source.Opt[float64]
	opsAt                  []opsPoint
	closed                 bool
	report                 *source.SaveReport
	prevSave               string // rdb_saves/rdb_last_save_time before the BGSAVE
	// endedSeen is when INFO first showed the save over while no report
	// had come; -1 before.
	endedSeen time.Duration
}

// measure runs the window on the events of the run's watcher. ctx is the
// caller's, runCtx the run's (commands of the run go out on it).
func (win *window) measure(ctx, runCtx context.Context, events <-chan source.Event) error {
	cfg := win.b.cfg
	win.t0, win.ops0 = cfg.Clock.Offset(), win.wr.Ops()
	win.sent, win.endedSeen = -1, -1
	trigger := time.NewTimer(cfg.TriggerAt)
	defer trigger.Stop()
	windowEnd := time.NewTimer(cfg.Window)
	defer windowEnd.Stop()
	// A save may outlast the window; wait for it, but not for ever.
	limit := max(10*cfg.Window, 10*time.Minute)
	giveUp := time.NewTimer(limit)
	defer giveUp.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for !win.closed || win.report == nil {
		var err error
		select {
		case ev := <-events:
			win.take(ev)
		case <-trigger.C:
			err = win.bgsave(runCtx)
		case <-windowEnd.C:
			win.tEnd = cfg.Clock.Offset()
			win.writerOps = float64(win.wr.Ops()-win.ops0) / (win.tEnd - win.t0).Seconds()
			win.closed = true
		case <-check.C:
			err = win.checkMissed(runCtx)
		case <-giveUp.C:
			err = fmt.Errorf("the save did not end within %s (%s)", limit, win.c.lastErr)
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// opsPoint is the writers' count at one moment of a run.
type opsPoint struct {
	off time.Duration
	ops uint64
}

// rateWarmup is how long after a run's window opens its write rate
// begins: the writers' start (connections, their first keys) is slower
// than their stride, and a save meets the stride.
const rateWarmup = time.Second

// take collects an event, and keeps the report of our save: an RDB save
// whose end was sampled after BGSAVE went out.
func (win *window) take(ev source.Event) {
	win.c.add(ev)
	if ev.Kind == source.EventSample && win.sent < 0 {
		win.opsAt = append(win.opsAt, opsPoint{win.b.cfg.Clock.Offset(), win.wr.Ops()})
	}
	if ev.Kind == source.EventSaveEnded && ev.Report != nil && win.sent >= 0 && win.report == nil &&
		isRDB(ev.Report.Kind) && ev.Report.Ended >= win.sent {
		win.report = ev.Report
	}
}

// bgsave sends the run's BGSAVE, noting first which save the server had
// done last.
func (win *window) bgsave(ctx context.Context) error {
	p, err := win.b.persistence(ctx, win.srv)
	if err != nil {
		return err
	}
	win.prevSave = p["rdb_saves"] + "/" + p["rdb_last_save_time"]
	win.rateBefore, win.peakBefore = win.ratesUntil(opsPoint{win.b.cfg.Clock.Offset(), win.wr.Ops()})
	res := win.w.Do(ctx, "BGSAVE")
	if !res.OK() {
		return fmt.Errorf("BGSAVE refused: %s", res.Err)
	}
	win.sent = res.Sent
	win.b.progress("%s run %d/%d: BGSAVE sent at %s (%s)", win.b.names[win.srv], win.runNo, win.b.runs,
		(res.Sent - win.t0).Round(time.Millisecond), res.Reply)
	return nil
}

// ratesUntil is the writers' mean and highest rate before now: from the
// first count at least rateWarmup into the window and at most
// forecast.RateWindow old (else the window's start) to now, and the
// highest between two successive counts of that span.
func (win *window) ratesUntil(now opsPoint) (mean, peak source.Opt[float64]) {
	span := []opsPoint{{win.t0, win.ops0}}
	for _, p := range win.opsAt {
		if p.off >= win.t0+rateWarmup && p.off >= now.off-forecast.RateWindow {
			span = append(span, p)
		}
	}
	if len(span) > 1 {
		span = span[1:] // the counts of the span itself, not the start's
	}
	span = append(span, now)
	rate := func(a, b opsPoint) (float64, bool) {
		if d := b.off - a.off; d > 0 {
			return float64(b.ops-a.ops) / d.Seconds(), true
		}
		return 0, false
	}
	if v, ok := rate(span[0], now); ok {
		mean = source.Some(v)
	}
	for i := 1; i < len(span); i++ {
		if v, ok := rate(span[i-1], span[i]); ok && (!peak.OK || v > peak.V) {
			peak = source.Some(v)
		}
	}
	return mean, peak
}

// checkMissed, once the window has closed, makes sure the watcher is not
// waiting for a save it missed (one shorter than a sampling interval ends
// between two samples).
func (win *window) checkMissed(ctx context.Context) error {
	if !win.closed || win.report != nil || win.sent < 0 {
		return nil
	}
	p, err := win.b.persistence(ctx, win.srv)
	if err != nil {
		return err
	}
	if p["rdb_bgsave_in_progress"] != "0" || p["rdb_saves"]+"/"+p["rdb_last_save_time"] == win.prevSave {
		return nil
	}
	cfg := win.b.cfg
	if win.endedSeen < 0 {
		win.endedSeen = cfg.Clock.Offset()
	} else if cfg.Clock.Offset()-win.endedSeen > 2*time.Second+5*cfg.Interval {
		return fmt.Errorf("the save ended but the watcher never saw it running (sampling every %s); "+
			"use a larger dataset (--keys) or a shorter interval", cfg.Interval)
	}
	return nil
}

// writerNotes says, in progress lines, what lowers a run's throughput
// figure or shows its keyspace changed: failed writes, and SETs that found
// no key to overwrite.
func (b *bencher) writerNotes(srv, runNo int, wr *load.Writers) {
	if n := wr.Errors(); n > 0 {
		b.progress("%s run %d/%d: the writers saw %d errors, last: %v", b.names[srv], runNo, b.runs, n, wr.LastError())
	}
	if n := wr.Misses(); n > 0 {
		b.progress("%s run %d/%d: %d of the writers' SETs found no key to overwrite (part of the keyspace went missing)", b.names[srv], runNo, b.runs, n)
	}
}

// serverSaid fills the save's cost as the server itself reports it after
// the run (rdb_last_cow_size, rdb_last_bgsave_time_sec), where the run's
// save set them: the report says which (COWFrom, ServerSeconds).
func (b *bencher) serverSaid(ctx context.Context, srv int, r *result.Run) error {
	p, err := b.persistence(ctx, srv)
	if err != nil {
		return err
	}
	read := func(field string) (source.Opt[int64], error) {
		v, err := strconv.ParseInt(p[field], 10, 64)
		if err != nil {
			return source.Opt[int64]{}, fmt.Errorf("server reports no %s (%q)", field, p[field])
		}
		return source.Some(v), nil
	}
	rep := &r.Report
	switch rep.COWFrom {
	case source.FromRDBLastCOW:
		if r.ServerCOW, err = read("rdb_last_cow_size"); err != nil {
			return err
		}
	case source.FromNoChild:
		r.ServerCOW = source.Some[int64](0)
	}
	if rep.ServerSeconds.OK {
		if r.ServerSeconds, err = read("rdb_last_bgsave_time_sec"); err != nil {
			return err
		}
	}
	return nil
}

// judge fills the run's forecast from the calibrations of the runs
// before it (only what was known before its BGSAVE: the dataset at run
// start, the writers' rate up to the save, RateBefore) and returns
// them with this run's own added.
func judge(r *result.Run, cals []forecast.Calibration) []forecast.Calibration {
	rep := r.Report
	if r.RateBefore.OK {
		rep.OpsBefore = r.RateBefore
	}
	now := forecast.Now{
		Used: source.Some(r.UsedMemory), RSS: r.Report.BaseRSS,
		Rate: rep.OpsBefore, Peak: r.PeakBefore, Keys: source.Some(r.DatasetKeys),
		AllocatorFree: r.AllocatorFree,
		// What was known before the BGSAVE: the method set for it.
		Forkless: r.Asked == "forkless",
	}
	if !now.Rate.OK {
		now.Rate = r.Report.WriterOpsBefore
	}
	var cal *forecast.Calibration
	if c, ok := forecast.Mean(cals); ok {
		cal = &c
	}
	if f, ok := forecast.Predict(now, cal); ok {
		r.Forecast = f
		if e, ok := forecast.Error(f.COW, r.ServerCOW.V); ok && r.ServerCOW.OK {
			r.ForecastErr = source.Some(e)
		}
	}
	rep.COW = r.ServerCOW
	if c, ok := forecast.Calibrate(&rep); ok {
		cals = append(cals, c)
	}
	return cals
}

func isRDB(k source.SaveKind) bool { return k == source.SaveFork || k == source.SaveForkless }

// collector keeps a run's samples.
type collector struct {
	samples []source.Sample
	spikes  []source.Spike
	lastErr string
}

func (c *collector) add(ev source.Event) {
	switch ev.Kind {
	case source.EventSample:
		if ev.Sample != nil {
			c.samples = append(c.samples, *ev.Sample)
		}
	case source.EventSpike:
		if ev.Spike != nil {
			c.spikes = append(c.spikes, *ev.Spike)
		}
	case source.EventDisconnected:
		// The watcher reconnects on its own; remember why for an error
		// message should the run time out.
		c.lastErr = "last error: " + ev.Err
	}
}

// lastBefore is the last sample taken before off, nil when none was.
func (c *collector) lastBefore(off time.Duration) *source.Sample {
	for i := len(c.samples) - 1; i >= 0; i-- {
		if c.samples[i].Offset < off {
			return &c.samples[i]
		}
	}
	return nil
}

// ping returns the worst and the estimated 99th percentile PING of the
// samples taken in (from, to]. Each sample summarises the PINGs since the
// previous one.
func (c *collector) ping(from, to time.Duration) (worst, p99 time.Duration) {
	var in []source.Latency
	for _, s := range c.samples {
		if s.Offset > from && s.Offset <= to {
			worst = max(worst, s.Ping.Worst())
			in = append(in, s.Ping)
		}
	}
	return worst, estimateP99(in)
}

// spikeOf is the spike of the run's worst PING, a round trip of worst
// (exact to the nanosecond, it names its spike: the collector is the
// run's); nil when it broke no spike rule.
func (c *collector) spikeOf(worst time.Duration) *source.Spike {
	for i := len(c.spikes) - 1; i >= 0; i-- {
		if sp := c.spikes[i]; sp.Ping == worst {
			return &sp
		}
	}
	return nil
}

// memDelta is the peak memory cost of the save: at each sample during it,
// the server's RSS above its last level before the save plus the save
// child's copy-on-write; the seed measured the same sum as its container's
// cgroup memory. /proc figures are preferred where the server is local.
func (c *collector) memDelta(r *source.SaveReport) source.Opt[int64] {
	rss := func(s source.Sample) source.Opt[int64] {
		if s.Proc.RSS.OK {
			return s.Proc.RSS
		}
		return s.Info.RSS
	}
	child := func(s source.Sample) int64 {
		if v, ok := s.Proc.ChildPrivateDirty.Get(); ok {
			return v
		}
		return s.Info.CurrentCOW.Or(0) // 0 with no child (forkless, or after it ended)
	}
	var base source.Opt[int64]
	var peak source.Opt[int64]
	for _, s := range c.samples {
		v, ok := rss(s).Get()
		if !ok {
			continue
		}
		switch {
		case s.Offset < r.Started:
			base = source.Some(v)
		case s.Offset <= r.Ended && base.OK:
			d := v - base.V + child(s)
			if !peak.OK || d > peak.V {
				peak = source.Some(d)
			}
		}
	}
	return peak
}

// estimateP99 estimates the 99th percentile of the union of several
// interval summaries. The watcher hands out summaries (count, min, p50, p99,
// max), not raw round trips, so each interval's distribution is taken as
// piecewise linear through those points and the mixture, weighted by
// count, is solved for 0.99. The result lies between the smallest and the
// largest interval p99 and equals the p99 when there is one interval.
func estimateP99(ls []source.Latency) time.Duration {
	var total float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range ls {
		if l.Count <= 0 {
			continue
		}
		total += float64(l.Count)
		lo = math.Min(lo, float64(l.Min))
		hi = math.Max(hi, float64(l.Max))
	}
	if total == 0 {
		return 0
	}
	cdf := func(v float64) float64 {
		var sum float64
		for _, l := range ls {
			if l.Count > 0 {
				sum += float64(l.Count) * pieceCDF(l, v)
			}
		}
		return sum / total
	}
	for i := 0; i < 100 && hi-lo > 1; i++ {
		mid := (lo + hi) / 2
		if cdf(mid) >= 0.99 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Duration(math.Round(hi))
}

// pieceCDF is the fraction of an interval's PINGs at or below v, linear
// between the summary's points (min,0) (p50,.5) (p99,.99) (max,1).
func pieceCDF(l source.Latency, v float64) float64 {
	xs := [4]float64{float64(l.Min), float64(l.P50), float64(l.P99), float64(l.Max)}
	ys := [4]float64{0, 0.5, 0.99, 1}
	if v < xs[0] {
		return 0
	}
	for i := 3; i >= 1; i-- {
		if v >= xs[i] {
			return ys[i]
		}
		if v >= xs[i-1] {
			return ys[i-1] + (ys[i]-ys[i-1])*(v-xs[i-1])/(xs[i]-xs[i-1])
		}
	}
	return 0
}

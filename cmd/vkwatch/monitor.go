package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/live"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/metrics"
	"github.com/vkwatch/vkwatch/source/nodefile"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/queue"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/ui"
	"github.com/vkwatch/vkwatch/ui/tty"
)

// monitorFlags configure the live monitor (and the demo, which opens it).
type monitorFlags struct {
	interval         time.Duration
	idleInterval     time.Duration // 0: every --interval
	pingInterval     time.Duration // 0: the PING budget decides
	history          time.Duration
	connectTimeout   time.Duration
	writers          int
	keys             int
	valueSize        int
	record           string
	recordFormat     record.Format
	report           string
	readOnly         bool
	cluster          string
	maxParallelSaves int
	metrics          string
	headless         bool
	ascii            asciiFlag
	fleet            fleetFlags // --nodes, --shard, --max-observer-cost (the monitor's own, not the demo's)
}

// register gives fs the flags of the monitor that the demo shares. The
// monitor adds registerServers'.
func (f *monitorFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&f.interval, "interval", watch.DefaultInterval, "INFO sampling interval of a server that saves or is about to")
	fs.DurationVar(&f.idleInterval, "idle-interval", time.Second, "INFO sampling interval of a server at rest: no save running, "+
		"none sent or scheduled (0, or no longer than --interval: every --interval)")
	fs.DurationVar(&f.pingInterval, "ping-interval", 0, "PING probe interval per server, on its own connection "+
		"(default 2ms; with more than two servers longer, to keep about 1,000 PINGs a second in all)")
	fs.DurationVar(&f.history, "history", 2*time.Minute, "how much time the charts keep")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", live.DefaultConnectTimeout, "how long to wait for a server to answer at start")
	fs.IntVar(&f.writers, "writers", 0, "run W writers per watched server, overwriting random existing keys under the vkwatch: prefix (0: write nothing)")
	fs.IntVar(&f.keys, "keys", 1_000_000, "keyspace the writers overwrite (vkwatch:0 .. vkwatch:N-1; it must exist: see vkwatch load)")
	fs.IntVar(&f.valueSize, "value-size", 300, "bytes per value the writers SET")
	fs.StringVar(&f.record, "record", "", "record every sample and event to FILE (JSON Lines; see --record-format; FILE.zst or FILE.gz is compressed)")
	fs.TextVar(&f.recordFormat, "record-format", record.JSONL, "recording `format`: jsonl or csv")
	fs.StringVar(&f.report, "report", "", "write the save reports to FILE as JSON at exit (vkwatch report FILE makes a page of them)")
	fs.StringVar(&f.metrics, "metrics", "", "serve what vkwatch measures as OpenMetrics for Prometheus at http://ADDR/metrics (e.g. 127.0.0.1:9470)")
	fs.BoolVar(&f.headless, "headless", false, "run without the UI even on a terminal (with --metrics or --record)")
	registerASCII(fs, &f.ascii)
}

// registerServers gives fs the monitor's flags about servers the user
// names, which the demo, with two servers of its own, has no use for.
func (f *monitorFlags) registerServers(fs *pflag.FlagSet) {
	fs.BoolVar(&f.readOnly, "read-only", false, "send nothing that changes a server: b, a, B, A and --writers are disabled")
	fs.StringVar(&f.cluster, "cluster", "", "watch every node of the cluster ADDR is a node of (found by CLUSTER SHARDS, followed live)")
	fs.IntVar(&f.maxParallelSaves, "max-parallel-saves", 1, "how many saves a rolling save runs at once in the fleet (never two on one host)")
	f.fleet.registerNodes(fs, "watch")
	f.fleet.registerShard(fs)
}

func (f *monitorFlags) validate() error {
	switch {
	case f.interval < 10*time.Millisecond:
		return usageErr("--interval %s is too short (at least 10ms)", f.interval)
	case f.idleInterval < 0:
		return usageErr("--idle-interval must not be negative")
	case f.pingInterval != 0 && f.pingInterval < 100*time.Microsecond:
		return usageErr("--ping-interval %s is too short (at least 100µs)", f.pingInterval)
	case f.history < 10*time.Second:
		return usageErr("--history %s is too short (at least 10s)", f.history)
	case f.connectTimeout <= 0:
		return usageErr("--connect-timeout must be positive")
	case f.writers < 0 || f.keys < 1 || f.valueSize < 1:
		return usageErr("--writers, --keys and --value-size must be positive")
	case f.readOnly && f.writers > 0:
		return usageErr("--read-only and --writers contradict each other")
	case f.maxParallelSaves < 1:
		return usageErr("--max-parallel-saves must be at least 1")
	case f.cluster != "" && f.writers > 0:
		// The writers SET keys of every slot, which a cluster node answers
		// with MOVED for all but its own.
		return usageErr("--writers does not work with --cluster yet (a cluster node refuses keys of other shards' slots)")
	}
	return nil
}

func (a *app) runMonitor(ctx context.Context, cf *connFlags, mf *monitorFlags, addrs []string) error {
	if err := mf.validate(); err != nil {
		return err
	}
	if err := mf.fleet.validate(cf, mf.cluster, addrs); err != nil {
		return err
	}
	run := monitorRun{flags: mf}
	if path := mf.fleet.nodes; path != "" {
		l, parse, err := a.readNodes(ctx, cf, path)
		if err != nil {
			return err
		}
		run.endpoints, run.nodes = l.Endpoints, &nodesRun{path: path, parse: parse, list: l}
		return a.monitor(ctx, run)
	}
	if mf.cluster != "" {
		if err := cf.clusterAlone(mf.cluster, addrs); err != nil {
			return err
		}
		addrs, run.cluster = []string{mf.cluster}, true
	}
	eps, err := a.endpoints(ctx, cf, addrs)
	if err != nil {
		return err
	}
	run.endpoints = eps
	return a.monitor(ctx, run)
}

// monitorGCPercent is the runtime's GOGC in the monitor, set once as it
// starts unless GOGC is in the environment (then the user's choice holds,
// as does GOMEMLIMIT). One or two servers drawing keep about 1 MB live and
// allocate 2-3 MB a second (frames, INFO replies): at the default of 100,
// whose least heap goal is 4 MB, that is a collection about every second,
// each waking both processors; at 200 the least goal is 8 MB, a collection
// every few seconds for a few MB more resident. A fleet whose live heap is
// larger grows by twice it between collections instead of once.
const monitorGCPercent = 200

// monitorRun is one monitor session: the plain monitor, the demo's, or a
// cluster's.
type monitorRun struct {
	// endpoints are the servers to watch; with cluster, the one node the
	// cluster is found from.
	endpoints []source.Endpoint
	cluster   bool
	flags     *monitorFlags
	banner    string
	hint      string // what to press, kept whole on the title line
	// writers already running (the demo's), by endpoint; nil entries mean
	// none. When nil, --writers decides.
	writers []*load.Writers
	// nodes, when set, is the --nodes file the endpoints were read from,
	// followed while the monitor runs.
	nodes *nodesRun
}

// nodesRun is a --nodes file as read at start, and how to read it again.
type nodesRun struct {
	path  string
	parse nodefile.Parse
	list  nodefile.List
}

// monitor connects, runs the UI (or a headless recording without a
// terminal) until the user quits or a signal arrives, and tidies up. Each
// step owns what it opens and leaves its clean-up to the session, which
// runs them last first.
func (a *app) monitor(ctx context.Context, run monitorRun) (err error) {
	headless := run.flags.headless || !a.isTTY()
	if headless && run.flags.record == "" && run.flags.metrics == "" {
		if run.flags.headless {
			return usageErr("--headless needs --metrics ADDR or --record FILE: without the UI there is nothing else to show")
		}
		return withCode(exitNoTTY, errors.New("standard output is not a terminal: use `vkwatch bench` for a headless experiment, --record FILE to record samples, or --metrics ADDR to export them, without the UI"))
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(monitorGCPercent)
	}
	s := newMonitorSession(ctx, a, run)
	if headless {
		// Nobody takes the batches without a terminal: queued events
		// would pile up for as long as the recording runs.
		s.batch = nil
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for _, step := range []func() error{s.serveMetrics, s.connect, s.startWriters, s.openRecording, s.keepReports, s.startWatchers} {
		if err := step(); err != nil {
			return err
		}
	}
	if headless {
		return s.recordHeadless()
	}
	return s.runUI()
}

// monitorSession is one monitor run: what its steps opened, and how to close it.
type monitorSession struct {
	a      *app
	run    monitorRun
	mf     *monitorFlags
	ctx    context.Context
	cancel context.CancelFunc
	clock  *source.Clock
	proc   *procmem.Reader // nil when no node is local, or no /proc

	fleet *fleet.Fleet
	top   source.Topology   // as it stood at start
	conns []fleet.Connected // what connecting told of each node
	// writers are the write loads by node, set once they run; nodes
	// without an entry get none.
	writers map[source.NodeID]*atomic.Pointer[load.Writers]

	rec *live.Recording
	// metricsAddr is where --metrics listens, once it does.
	metricsAddr string
	exp         *metrics.Exporter // nil without --metrics
	reports     live.Reports
	// batch queues the events the UI is given (ui.Pump); nil without it.
	batch *queue.Queue[source.Event]
	crash live.Crash
	// topoErr is the topology's error said last without the UI.
	topoErrMu sync.Mutex
	topoErr   string

	cleanups []func() error
}

func newMonitorSession(ctx context.Context, a *app, run monitorRun) *monitorSession {
	s := &monitorSession{a: a, run: run, mf: run.flags, clock: source.NewClock(), batch: queue.New[source.Event](),
		writers: map[source.NodeID]*atomic.Pointer[load.Writers]{}}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.onExit(func() error { s.cancel(); return nil })
	return s
}

// onExit adds a clean-up; close runs them last first.
func (s *monitorSession) onExit(f func() error) { s.cleanups = append(s.cleanups, f) }

// close runs every clean-up and returns the first error.
func (s *monitorSession) close() error {
	var first error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		if err := s.cleanups[i](); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// connect learns the fleet (a cluster's nodes, or the addresses given) and
// reaches every node at once, each within --connect-timeout. None
// reachable is exit status 3; the others are watched and retried.
func (s *monitorSession) connect() error {
	for _, ep := range s.run.endpoints {
		if ep.Local() {
			s.proc, _ = procmem.New() // no /proc: the /proc line shows n/a
			break
		}
	}
	cfg := fleet.Config{
		Watch: watch.Config{
			Interval:       s.mf.interval,
			PingInterval:   s.mf.pingInterval,
			ConnectTimeout: s.mf.connectTimeout,
		},
		IdleInterval:     s.mf.idleInterval,
		Configure:        s.configure,
		Clock:            s.clock,
		Share:            s.mf.fleet.share,
		MaxObserverShare: s.mf.fleet.maxObserver,
	}
	if n := s.run.nodes; n != nil {
		cfg.Via, cfg.From = "nodes file", n.path
		cfg.Follow = followNodes(n.path, n.parse, n.list)
	}
	if s.run.cluster {
		seed := s.run.endpoints[0]
		if err := s.checkSeed(seed); err != nil {
			return err
		}
		s.fleet = fleet.NewCluster(seed, cfg)
	} else {
		members := make([]fleet.Member, len(s.run.endpoints))
		for i, ep := range s.run.endpoints {
			members[i] = fleet.Member{ID: ep.Node(), Endpoint: ep}
			s.prepareWriters(i, ep.Node())
		}
		s.fleet = fleet.NewList(members, cfg)
	}
	s.onExit(s.fleet.Close)
	var err error
	s.top, s.conns, err = live.ConnectFleet(s.ctx, s.fleet)
	if err != nil {
		return err
	}
	if len(s.conns) == 0 {
		return withCode(exitConnect, fmt.Errorf("--shard %s keeps none of the fleet's nodes: nothing to watch", s.mf.fleet.share))
	}
	live.WarnNoPassword(s.ctx, s.a.stderr, s.answered())
	return nil
}

// answered are the servers given that answered: a cluster's seed (its
// nodes share its credentials), or each address that connected.
func (s *monitorSession) answered() []source.Endpoint {
	if s.run.cluster {
		return s.run.endpoints
	}
	var eps []source.Endpoint
	for _, c := range s.conns {
		if c.Err == nil {
			eps = append(eps, c.Member.Endpoint)
		}
	}
	return eps
}

// checkSeed reaches the node a cluster is found from the way a watcher
// does, so that a refusal reads like any other ("ADDR: connection
// refused"), and makes sure it is a cluster node.
func (s *monitorSession) checkSeed(seed source.Endpoint) error {
	w := watch.New(seed.Node(), seed, s.clock, watch.Config{ConnectTimeout: s.mf.connectTimeout})
	id, err := w.Connect(s.ctx)
	w.Close()
	switch {
	case err != nil:
		return withCode(exitConnect, err)
	case !id.Cluster:
		return withCode(exitConnect, fmt.Errorf("%s is not a cluster node (cluster_enabled:0): watch it without --cluster", seed))
	}
	return nil
}

// prepareWriters makes room for the write load of the i-th endpoint, when
// it gets one: the demo's, or --writers'. They start once the server is
// known to be reachable; until then they have done nothing.
func (s *monitorSession) prepareWriters(i int, node source.NodeID) {
	demo := i < len(s.run.writers) && s.run.writers[i] != nil
	if !demo && (s.run.writers != nil || s.mf.writers == 0) {
		return
	}
	p := &atomic.Pointer[load.Writers]{}
	if demo {
		p.Store(s.run.writers[i])
	}
	s.writers[node] = p
}

// configure sets up one node's watcher: /proc for a local one, the
// count of its writers' operations, and the exporter's PING histogram.
func (s *monitorSession) configure(m fleet.Member, cfg *watch.Config) {
	if s.proc != nil && m.Endpoint.Local() {
		cfg.Proc = s.proc.Read
	}
	if s.exp != nil {
		cfg.PingHistogram = s.exp.PingHistogram(m.ID)
	}
	if p := s.writers[m.ID]; p != nil {
		cfg.WriterOps = func() uint64 {
			if w := p.Load(); w != nil {
				return w.Ops()
			}
			return 0
		}
	}
}

// startWriters starts the user's own write load (--writers) on every node
// that could be reached. The writers only overwrite existing keys, so every
// node's keyspace is checked first, and unless each one is there nothing is
// started and nothing written: the error says how to preload.
func (s *monitorSession) startWriters() error {
	if s.run.writers != nil || s.mf.writers == 0 {
		return nil
	}
	cfg := load.Config{Keys: s.mf.keys, ValueSize: s.mf.valueSize, Writers: s.mf.writers}
	type target struct {
		opts *redis.Options
		p    *atomic.Pointer[load.Writers]
		ep   source.Endpoint
	}
	var targets []target
	for _, c := range s.conns {
		p := s.writers[c.Member.ID]
		if c.Err != nil || p == nil {
			continue
		}
		opts, err := watch.RedisOptions(c.Member.Endpoint)
		if err != nil {
			return withCode(exitConnect, err)
		}
		k, err := load.CheckKeyspace(s.ctx, opts, cfg)
		if err != nil {
			return withCode(exitConnect, fmt.Errorf("%s: %w", c.Member.Endpoint, err))
		}
		if err := k.Check(c.Member.Endpoint.String()); err != nil {
			return keyspaceRefusal(err, "monitor")
		}
		targets = append(targets, target{opts: opts, p: p, ep: c.Member.Endpoint})
	}
	for _, t := range targets {
		w, err := load.StartWriters(s.ctx, t.opts, cfg)
		if err != nil {
			return fmt.Errorf("%s: starting writers: %w", t.ep, err)
		}
		s.onExit(func() error { w.Stop(); return nil })
		t.p.Store(w)
	}
	return nil
}

// openRecording starts --record: its header lists the nodes watched from
// the start; nodes that join later are in its topology events.
func (s *monitorSession) openRecording() error {
	if s.mf.record == "" {
		return nil
	}
	servers := make([]record.ServerInfo, len(s.conns))
	for i, c := range s.conns {
		servers[i] = record.ServerInfo{Node: c.Member.ID, Addr: c.Member.Endpoint.String(), Identity: c.Identity}
	}
	settings := s.mf.settings()
	// The PING interval in force: --ping-interval, or the fleet's budget.
	settings["ping_interval"] = s.top.PingInterval.String()
	if s.run.cluster {
		settings["cluster"] = s.run.endpoints[0].String()
	}
	rec, err := live.Record(s.mf.record, s.mf.recordFormat, record.Header{VKWatch: vkwatchVersion(), Epoch: s.clock.Epoch(), Settings: settings, Servers: servers})
	if err != nil {
		return err
	}
	s.rec = rec
	s.onExit(rec.Close)
	return nil
}

// keepReports writes the save reports to --report at exit, once the
// watchers have stopped and every report is in.
func (s *monitorSession) keepReports() error {
	if s.mf.report == "" {
		return nil
	}
	s.onExit(func() error { return s.reports.Write(s.mf.report) })
	return nil
}

// emit takes every event of the fleet: to the recording, the reports and
// the queue that feeds the UI. The fleet calls it from several
// goroutines at once.
func (s *monitorSession) emit(ev source.Event) {
	if s.rec != nil {
		s.rec.Write(ev)
	}
	if s.exp != nil {
		s.exp.Observe(ev)
	}
	s.reports.Observe(ev)
	if s.batch != nil {
		s.batch.Push(ev)
	} else if ev.Kind == source.EventTopology && ev.Topology != nil {
		s.sayTopologyErr(ev.Topology.Err)
	}
}

// sayTopologyErr tells stderr, without the UI, when the fleet's source
// fails (a --nodes file that does not read, a rediscovery that fails) and
// when it works again: once each.
func (s *monitorSession) sayTopologyErr(e string) {
	s.topoErrMu.Lock()
	defer s.topoErrMu.Unlock()
	switch {
	case e == s.topoErr:
		return
	case e == "":
		fmt.Fprintln(s.a.stderr, "vkwatch: the fleet's source reads well again")
	default:
		fmt.Fprintln(s.a.stderr, "vkwatch:", inert.Text(e))
	}
	s.topoErr = e
}

// startWatchers runs the fleet. A node that could not be reached at start
// shows why while its watcher keeps trying. A panic in a background
// goroutine would kill the process with the terminal still in raw mode:
// it is caught, ends the run through its context (which restores the
// terminal), and comes back as the run's error.
func (s *monitorSession) startWatchers() error {
	for _, c := range s.conns {
		if c.Err != nil {
			off, at := s.clock.Now()
			s.emit(source.Event{Node: c.Member.ID, Kind: source.EventDisconnected, Offset: off, At: at, Err: c.Err.Error()})
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer s.crash.Recover(s.cancel)
		s.fleet.Run(s.ctx, s.emit)
	})
	s.onExit(func() error {
		s.cancel()
		wg.Wait()
		return s.crash.Err()
	})
	return nil
}

// recordHeadless records, exports or both until ctrl+c or SIGTERM.
func (s *monitorSession) recordHeadless() error {
	var what []string
	if s.mf.record != "" {
		what = append(what, "recording to "+inert.Text(s.mf.record))
	}
	if s.metricsAddr != "" {
		what = append(what, "serving metrics at http://"+inert.Text(s.metricsAddr)+"/metrics")
	}
	fmt.Fprintf(s.a.stderr, "vkwatch: watching %d server(s) without the UI, %s; stop with ctrl+c or SIGTERM\n", len(s.conns), strings.Join(what, " and "))
	<-s.ctx.Done()
	return nil
}

// serveMetrics starts --metrics: an OpenMetrics endpoint fed by the same
// events as the UI and the recording. It listens before the watchers run,
// so a port already taken is an error at start, not a silent gap.
func (s *monitorSession) serveMetrics() error {
	if s.mf.metrics == "" {
		return nil
	}
	s.exp = metrics.New(version)
	srv, err := metrics.Listen(s.mf.metrics, s.exp)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	s.metricsAddr = srv.Addr()
	s.onExit(srv.Close)
	return nil
}

// runUI runs the terminal UI until the user quits or a signal ends the run.
// One or two servers show as panes side by side; a cluster, or three or
// more servers, as the fleet view, which follows the topology's changes.
func (s *monitorSession) runUI() error {
	nodes := make([]ui.Node, len(s.conns))
	for i, c := range s.conns {
		nodes[i] = ui.Node{ID: c.Member.ID, Addr: c.Member.Endpoint.String()}
	}
	top := s.top
	model := ui.New(ui.Config{
		Nodes:            nodes,
		Topology:         &top,
		History:          s.mf.history,
		Interval:         s.mf.interval,
		IdleInterval:     s.mf.idleInterval,
		ReadOnly:         s.mf.readOnly,
		Banner:           s.banner(),
		Hint:             s.run.hint,
		MaxParallelSaves: s.mf.maxParallelSaves,
		ASCII:            s.mf.ascii.screen(s.a.getenv),
		Send: func(node source.NodeID, args ...string) {
			s.fleet.Do(s.ctx, node, args...)
		},
		Expect: s.fleet.Expect,
	})
	p := newProgram(s.ctx, model, s.a)
	go func() {
		defer s.crash.Recover(s.cancel)
		ui.Pump(s.ctx, s.batch, p.Send)
	}()
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && s.ctx.Err() != nil {
		err = nil // a signal: quit like q
	}
	return err
}

// banner is the title line's note: the demo's, and a hint when a server
// watched alone is a cluster node. (The fleet view says itself what the
// fleet is and its PING interval per node, as the topology changes.)
func (s *monitorSession) banner() string {
	var parts []string
	if s.run.banner != "" {
		parts = append(parts, s.run.banner)
	}
	if !s.run.cluster && len(s.conns) <= 2 {
		for _, c := range s.conns {
			if c.Identity != nil && c.Identity.Cluster {
				parts = append(parts, fmt.Sprintf("%s is a cluster node: try --cluster %s", c.Member.Endpoint, c.Member.Endpoint))
				break
			}
		}
	}
	return strings.Join(parts, " · ")
}

// newProgram runs m full screen on a's terminal until the user quits or
// ctx ends (a signal, see run), which quits like q: the last frame is
// drawn and the input reader is waited for before the terminal is given
// back. Neither bubbletea's WithContext, whose kill path closes the input
// while its reader still uses it (a data race), nor its own signal
// handler, which can block forever sending a QuitMsg that nobody reads
// once the program has ended, is used. Frames are drawn by ui/tty when
// the view changes, not by bubbletea's renderer at a fixed rate.
func newProgram(ctx context.Context, m tea.Model, a *app) *program {
	t := tty.New(a.stdin, a.stdout)
	p := t.Program(m, tea.WithoutSignalHandler())
	go func() {
		<-ctx.Done()
		p.Quit() // returns at once when the program has already ended
	}()
	return &program{Program: p, t: t}
}

// program is a bubbletea program and the terminal that draws it.
type program struct {
	*tea.Program
	t *tty.Terminal
}

// Run runs the program on its terminal.
func (p *program) Run() (tea.Model, error) { return p.t.Run(p.Program) }

func (f *monitorFlags) settings() map[string]string {
	return map[string]string{
		"interval":           f.interval.String(),
		"idle_interval":      f.idleInterval.String(),
		"history":            f.history.String(),
		"writers":            fmt.Sprint(f.writers),
		"keys":               fmt.Sprint(f.keys),
		"value_size":         fmt.Sprint(f.valueSize),
		"read_only":          fmt.Sprint(f.readOnly),
		"max_parallel_saves": fmt.Sprint(f.maxParallelSaves),
	}
}

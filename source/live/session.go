package live

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/metrics"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/queue"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/watch"
)

// Config is what a monitor session watches and where its events go.
type Config struct {
	// Endpoints are the servers to watch; with Cluster, the one node the
	// cluster is found from, which must answer and be a cluster node.
	Endpoints []source.Endpoint
	Cluster   bool
	// Fleet configures the watchers; the session sets its Clock and
	// Configure.
	Fleet fleet.Config
	// Writers are write loads already running (the demo's), by endpoint;
	// nil entries mean none. When nil, Load decides.
	Writers []*load.Writers
	// Load is the user's own write load (--writers) on every node that
	// answers; none when its Writers is 0.
	Load load.Config
	// Record is the file every event is recorded to (--record), in
	// RecordFormat, with Settings in its header (to which the session
	// adds the PING interval in force, and the cluster), made by VKWatch.
	Record       string
	RecordFormat record.Format
	Settings     map[string]string
	VKWatch      string
	// Report is the file the save reports are written to at exit.
	Report string
	// Metrics is where OpenMetrics is served (--metrics), by Version.
	Metrics string
	Version string
	// UI: events are queued for the UI to take (Events). Without it
	// nobody would take them, and they would pile up for as long as the
	// session runs.
	UI bool
	// Log is told what the user should know that is not an error: a
	// password given to a server that needs none, and, without the UI,
	// when the fleet's source fails and when it reads well again.
	Log io.Writer
}

// Session is one monitor run: the fleet it watches, what its steps
// opened, and how to close them. Start opens it; Close ends it.
type Session struct {
	cfg    Config
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

	rec         *Recording
	metricsAddr string            // where --metrics listens, once it does
	exp         *metrics.Exporter // nil without --metrics
	reports     Reports
	events      *queue.Queue[source.Event] // nil without the UI
	crash       Crash
	// topoErr is the topology's error said last without the UI.
	topoErrMu sync.Mutex
	topoErr   string

	cleanups []func() error
}

// Start opens a session: it serves the metrics, connects to the fleet,
// starts the writers, opens the recording and runs the watchers, each
// step owning what it opens and leaving its clean-up to Close, which runs
// them last first. No server reached is an UnreachableError, a keyspace
// the writers cannot use a *load.KeyspaceError; what was opened is closed.
// ctx ends the session, as does a panic in one of its goroutines (Go).
func Start(ctx context.Context, cfg Config) (*Session, error) {
	s := &Session{cfg: cfg, clock: source.NewClock(), writers: map[source.NodeID]*atomic.Pointer[load.Writers]{}}
	if cfg.UI {
		s.events = queue.New[source.Event]()
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.onExit(func() error { s.cancel(); return nil })
	for _, step := range []func() error{s.serveMetrics, s.connect, s.startWriters, s.openRecording, s.keepReports, s.watch} {
		if err := step(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// onExit adds a clean-up; Close runs them last first.
func (s *Session) onExit(f func() error) { s.cleanups = append(s.cleanups, f) }

// Close ends the session: the watchers stop, the reports are written, the
// recording is flushed, the writers stop. It returns the first error,
// and the first panic of the session's goroutines first of all.
func (s *Session) Close() error {
	var first error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		if err := s.cleanups[i](); err != nil && first == nil {
			first = err
		}
	}
	s.cleanups = nil
	return first
}

// Context ends with the session: the context it was started with, a
// panic in one of its goroutines, or Close.
func (s *Session) Context() context.Context { return s.ctx }

// Go runs f in a goroutine of the session's: a panic there ends the
// session and is Close's error.
func (s *Session) Go(f func()) {
	go func() {
		defer s.crash.Recover(s.cancel)
		f()
	}()
}

// Events are the session's events for the UI; nil without Config.UI.
func (s *Session) Events() *queue.Queue[source.Event] { return s.events }

// Topology is the fleet as it stood at start.
func (s *Session) Topology() source.Topology { return s.top }

// Conns are what connecting told of each node at start.
func (s *Session) Conns() []fleet.Connected { return s.conns }

// MetricsAddr is where --metrics listens; empty without it.
func (s *Session) MetricsAddr() string { return s.metricsAddr }

// Do sends a command to a node (the UI's keys) on the session's context.
func (s *Session) Do(node source.NodeID, args ...string) { s.fleet.Do(s.ctx, node, args...) }

// Expect names the nodes a rolling save starts next, to be probed
// closely (fleet.Fleet's Expect).
func (s *Session) Expect(why string, nodes ...source.NodeID) { s.fleet.Expect(why, nodes...) }

// connect learns the fleet (a cluster's nodes, or the addresses given) and
// reaches every node at once, each within the connect timeout. None
// reachable is an UnreachableError; the others are watched and retried.
func (s *Session) connect() error {
	for _, ep := range s.cfg.Endpoints {
		if ep.Local() {
			s.proc, _ = procmem.New() // no /proc: the /proc line shows n/a
			break
		}
	}
	cfg := s.cfg.Fleet
	cfg.Configure, cfg.Clock = s.configure, s.clock
	if s.cfg.Cluster {
		seed := s.cfg.Endpoints[0]
		if err := s.checkSeed(seed); err != nil {
			return err
		}
		s.fleet = fleet.NewCluster(seed, cfg)
	} else {
		members := make([]fleet.Member, len(s.cfg.Endpoints))
		for i, ep := range s.cfg.Endpoints {
			members[i] = fleet.Member{ID: ep.Node(), Endpoint: ep}
			s.prepareWriters(i, ep.Node())
		}
		s.fleet = fleet.NewList(members, cfg)
	}
	s.onExit(s.fleet.Close)
	var err error
	s.top, s.conns, err = ConnectFleet(s.ctx, s.fleet)
	if err != nil {
		return err
	}
	if len(s.conns) == 0 {
		return Unreachable(fmt.Errorf("--shard %s keeps none of the fleet's nodes: nothing to watch", s.cfg.Fleet.Share))
	}
	WarnNoPassword(s.ctx, s.cfg.Log, s.answered())
	return nil
}

// answered are the servers given that answered: a cluster's seed (its
// nodes share its credentials), or each address that connected.
func (s *Session) answered() []source.Endpoint {
	if s.cfg.Cluster {
		return s.cfg.Endpoints
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
func (s *Session) checkSeed(seed source.Endpoint) error {
	w := watch.New(seed.Node(), seed, s.clock, watch.Config{ConnectTimeout: s.cfg.Fleet.Watch.ConnectTimeout})
	id, err := w.Connect(s.ctx)
	w.Close()
	switch {
	case err != nil:
		return Unreachable(err)
	case !id.Cluster:
		return Unreachable(fmt.Errorf("%s is not a cluster node (cluster_enabled:0): watch it without --cluster", seed))
	}
	return nil
}

// prepareWriters makes room for the write load of the i-th endpoint, when
// it gets one: the demo's, or --writers'. They start once the server is
// known to be reachable; until then they have done nothing.
func (s *Session) prepareWriters(i int, node source.NodeID) {
	demo := i < len(s.cfg.Writers) && s.cfg.Writers[i] != nil
	if !demo && (s.cfg.Writers != nil || s.cfg.Load.Writers == 0) {
		return
	}
	p := &atomic.Pointer[load.Writers]{}
	if demo {
		p.Store(s.cfg.Writers[i])
	}
	s.writers[node] = p
}

// configure sets up one node's watcher: /proc for a local one, the
// count of its writers' operations, and the exporter's PING histogram.
func (s *Session) configure(m fleet.Member, cfg *watch.Config) {
	if s.proc != nil && m.Endpoint.Local() {
		cfg.Proc, cfg.Sched = s.proc.Read, s.proc.Sched
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
// started and nothing written: the error says what is missing.
func (s *Session) startWriters() error {
	if s.cfg.Writers != nil || s.cfg.Load.Writers == 0 {
		return nil
	}
	cfg := s.cfg.Load
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
			return Unreachable(err)
		}
		k, err := load.CheckKeyspace(s.ctx, opts, cfg)
		if err != nil {
			return Unreachable(fmt.Errorf("%s: %w", c.Member.Endpoint, err))
		}
		if err := k.Check(c.Member.Endpoint.String()); err != nil {
			return err
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
func (s *Session) openRecording() error {
	if s.cfg.Record == "" {
		return nil
	}
	servers := make([]record.ServerInfo, len(s.conns))
	for i, c := range s.conns {
		servers[i] = record.ServerInfo{Node: c.Member.ID, Addr: c.Member.Endpoint.String(), Identity: c.Identity}
	}
	settings := map[string]string{}
	for k, v := range s.cfg.Settings {
		settings[k] = v
	}
	// The PING interval in force: --ping-interval, or the fleet's budget.
	settings["ping_interval"] = s.top.PingInterval.String()
	if s.cfg.Cluster {
		settings["cluster"] = s.cfg.Endpoints[0].String()
	}
	rec, err := Record(s.cfg.Record, s.cfg.RecordFormat, record.Header{VKWatch: s.cfg.VKWatch, Epoch: s.clock.Epoch(), Settings: settings, Servers: servers})
	if err != nil {
		return err
	}
	s.rec = rec
	s.onExit(rec.Close)
	return nil
}

// keepReports writes the save reports to --report at exit, once the
// watchers have stopped and every report is in.
func (s *Session) keepReports() error {
	if s.cfg.Report != "" {
		s.onExit(func() error { return s.reports.Write(s.cfg.Report) })
	}
	return nil
}

// serveMetrics starts --metrics: an OpenMetrics endpoint fed by the same
// events as the UI and the recording. It listens before the watchers run,
// so a port already taken is an error at start, not a silent gap.
func (s *Session) serveMetrics() error {
	if s.cfg.Metrics == "" {
		return nil
	}
	s.exp = metrics.New(s.cfg.Version)
	srv, err := metrics.Listen(s.cfg.Metrics, s.exp)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	s.metricsAddr = srv.Addr()
	s.onExit(srv.Close)
	return nil
}

// emit takes every event of the fleet: to the recording, the exporter, the
// reports and the queue that feeds the UI. The fleet calls it from several
// goroutines at once.
func (s *Session) emit(ev source.Event) {
	if s.rec != nil {
		s.rec.Write(ev)
	}
	if s.exp != nil {
		s.exp.Observe(ev)
	}
	s.reports.Observe(ev)
	if s.events != nil {
		s.events.Push(ev)
	} else if ev.Kind == source.EventTopology && ev.Topology != nil {
		s.sayTopologyErr(ev.Topology.Err)
	}
}

// sayTopologyErr tells Log, without the UI, when the fleet's source fails
// (a --nodes file that does not read, a rediscovery that fails) and when
// it works again: once each.
func (s *Session) sayTopologyErr(e string) {
	s.topoErrMu.Lock()
	defer s.topoErrMu.Unlock()
	switch {
	case e == s.topoErr:
		return
	case e == "":
		fmt.Fprintln(s.cfg.Log, "vkwatch: the fleet's source reads well again")
	default:
		fmt.Fprintln(s.cfg.Log, "vkwatch:", inert.Text(e))
	}
	s.topoErr = e
}

// watch runs the fleet. A node that could not be reached at start shows
// why while its watcher keeps trying. A panic in the fleet's goroutine
// ends the session and is Close's error (Crash).
func (s *Session) watch() error {
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

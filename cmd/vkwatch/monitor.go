package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/live"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/nodefile"
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
	spikes           bool
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
	fs.BoolVar(&f.spikes, "spikes", true, "explain PING spikes: after one, read SLOWLOG, LATENCY LATEST, INFO latencystats and a local server's /proc (--spikes=false: none of it)")
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

// monitor starts a session (source/live), runs the UI (or a headless
// recording or export without a terminal) until the user quits or a
// signal arrives, and closes the session.
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
	s, err := live.Start(ctx, a.sessionConfig(run, !headless))
	if err != nil {
		return keyspaceRefusal(err, "monitor")
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if headless {
		return a.recordHeadless(s, run.flags)
	}
	return a.runUI(s, run)
}

// sessionConfig is the session the flags ask for.
func (a *app) sessionConfig(run monitorRun, withUI bool) live.Config {
	mf := run.flags
	cfg := live.Config{
		Endpoints: run.endpoints,
		Cluster:   run.cluster,
		Fleet: fleet.Config{
			Watch:            watch.Config{Interval: mf.interval, PingInterval: mf.pingInterval, ConnectTimeout: mf.connectTimeout, NoSpikes: !mf.spikes},
			IdleInterval:     mf.idleInterval,
			Share:            mf.fleet.share,
			MaxObserverShare: mf.fleet.maxObserver,
		},
		Writers:      run.writers,
		Load:         load.Config{Keys: mf.keys, ValueSize: mf.valueSize, Writers: mf.writers},
		Record:       mf.record,
		RecordFormat: mf.recordFormat,
		Settings:     mf.settings(),
		VKWatch:      vkwatchVersion(),
		Report:       mf.report,
		Metrics:      mf.metrics,
		Version:      version,
		UI:           withUI,
		Log:          a.stderr,
	}
	if n := run.nodes; n != nil {
		cfg.Fleet.Via, cfg.Fleet.From = "nodes file", n.path
		cfg.Fleet.Follow = live.FollowNodes(n.path, nodesPoll, n.parse, n.list)
	}
	return cfg
}

// recordHeadless records, exports or both until ctrl+c or SIGTERM.
func (a *app) recordHeadless(s *live.Session, mf *monitorFlags) error {
	var what []string
	if mf.record != "" {
		what = append(what, "recording to "+inert.Text(mf.record))
	}
	if addr := s.MetricsAddr(); addr != "" {
		what = append(what, "serving metrics at http://"+inert.Text(addr)+"/metrics")
	}
	fmt.Fprintf(a.stderr, "vkwatch: watching %d server(s) without the UI, %s; stop with ctrl+c or SIGTERM\n", len(s.Conns()), strings.Join(what, " and "))
	<-s.Context().Done()
	return nil
}

// runUI runs the terminal UI until the user quits or the session ends.
// One or two servers show as panes side by side; a cluster, or three or
// more servers, as the fleet view, which follows the topology's changes.
// The session's events reach it at most once a frame (ui.Pump).
func (a *app) runUI(s *live.Session, run monitorRun) error {
	mf := run.flags
	nodes := make([]ui.Node, len(s.Conns()))
	for i, c := range s.Conns() {
		nodes[i] = ui.Node{ID: c.Member.ID, Addr: c.Member.Endpoint.String()}
	}
	top := s.Topology()
	model := ui.New(ui.Config{
		Nodes:            nodes,
		Topology:         &top,
		History:          mf.history,
		Interval:         mf.interval,
		IdleInterval:     mf.idleInterval,
		ReadOnly:         mf.readOnly,
		Banner:           banner(run, s.Conns()),
		Hint:             run.hint,
		MaxParallelSaves: mf.maxParallelSaves,
		ASCII:            mf.ascii.screen(a.getenv),
		Send:             s.Do,
		Expect:           s.Expect,
	})
	ctx := s.Context()
	return tty.RunUntil(ctx, a.stdin, a.stdout, model, func(send func(tea.Msg)) {
		s.Go(func() { ui.Pump(ctx, s.Events(), send) })
	})
}

// banner is the title line's note: the demo's, and a hint when a server
// watched alone is a cluster node. (The fleet view says itself what the
// fleet is and its PING interval per node, as the topology changes.)
func banner(run monitorRun, conns []fleet.Connected) string {
	var parts []string
	if run.banner != "" {
		parts = append(parts, run.banner)
	}
	if !run.cluster && len(conns) <= 2 {
		for _, c := range conns {
			if c.Identity != nil && c.Identity.Cluster {
				parts = append(parts, fmt.Sprintf("%s is a cluster node: try --cluster %s", c.Member.Endpoint, c.Member.Endpoint))
				break
			}
		}
	}
	return strings.Join(parts, " · ")
}

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

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/live"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/ui/plain"
	"github.com/vkwatch/vkwatch/ui/words"
)

// saveFlags configure vkwatch save.
type saveFlags struct {
	conn             *connFlags
	cluster          string
	nodes            string
	rolling          bool
	maxParallelSaves int
	force            bool
	report           string
	record           string
	interval         time.Duration
	connectTimeout   time.Duration
}

func (a *app) saveCommand() *cobra.Command {
	sf := &saveFlags{}
	cmd := &cobra.Command{
		Use:   "save ADDR | --cluster ADDR --rolling | --nodes FILE --rolling [--max-parallel-saves N]",
		Short: "BGSAVE a server, or a cluster node by node, from a script, and wait for the result",
		Long: `save sends BGSAVE and waits for the save to end, printing its progress and what
it cost, without a terminal UI: for scripts and cron.

save ADDR saves that one server now: a refusal (a save already running, an ACL
user without +bgsave) is printed in the server's own words.

save --cluster ADDR --rolling is the fleet view's B, headless: one node per
shard (a replica where the shard has a healthy one), at most
--max-parallel-saves at once and never two on one host, each after the
others' saves are over. It stops at the first refusal, failed save or node
lost, in the server's words. save --nodes FILE --rolling does the same over
the servers the file names (one address or URL a line, # comments).

Before each fork the memory check (as b and B do) projects the node's last
copy-on-write against MemAvailable, its cgroup's limit, maxmemory and
total_system_memory; where the fork would not fit, nothing is sent and save
stops, unless --force.

A line per node tells its progress (a bar while it saves, on a terminal).
Exit status 0: every node saved; 1: it stopped (the reason printed);
2: bad flags; 3: no server could be reached.`,
		Example: `  vkwatch save 10.0.0.5:6379
  vkwatch save --cluster 10.0.0.7:6379 --rolling --report saves.json
  VALKEYCLI_AUTH=secret vkwatch save --cluster valkeys://cache.internal:6380 --rolling --cacert ca.pem`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSave(cmd.Context(), sf.conn, sf, args)
		},
	}
	sf.conn = connFlagsOf(cmd)
	fs := cmd.Flags()
	fs.StringVar(&sf.cluster, "cluster", "", "save the cluster ADDR is a node of (with --rolling)")
	fs.StringVar(&sf.nodes, "nodes", "", "save every server the file FILE names, one address or URL a line (with --rolling)")
	fs.BoolVar(&sf.rolling, "rolling", false, "a safe rolling save: one node per shard, one host at a time")
	fs.IntVar(&sf.maxParallelSaves, "max-parallel-saves", 1, "with --rolling: how many saves at once in the fleet (never two on one host)")
	fs.BoolVar(&sf.force, "force", false, "send BGSAVE even where the memory check says the fork would not fit")
	fs.StringVar(&sf.report, "report", "", "write the save reports to FILE as JSON at the end")
	fs.StringVar(&sf.record, "record", "", "record every sample and event to FILE (JSON Lines; FILE.zst or FILE.gz is compressed)")
	fs.DurationVar(&sf.interval, "interval", 200*time.Millisecond, "INFO sampling interval")
	fs.DurationVar(&sf.connectTimeout, "connect-timeout", live.DefaultConnectTimeout, "how long to wait for the servers to answer at start")
	return cmd
}

func (sf *saveFlags) validate(args []string) error {
	switch {
	case sf.maxParallelSaves < 1:
		return usageErr("--max-parallel-saves must be at least 1")
	case sf.interval < 10*time.Millisecond:
		return usageErr("--interval %s is too short (at least 10ms)", sf.interval)
	case sf.connectTimeout <= 0:
		return usageErr("--connect-timeout must be positive")
	case sf.cluster != "" && sf.nodes != "":
		return usageErr("--nodes and --cluster both name the fleet: give one")
	case sf.cluster != "" && !sf.rolling:
		return usageErr("--cluster saves the cluster node by node: add --rolling")
	case sf.nodes != "" && !sf.rolling:
		return usageErr("--nodes saves the file's servers one by one: add --rolling")
	case sf.rolling && sf.cluster == "" && sf.nodes == "":
		return usageErr("--rolling goes with --cluster ADDR or --nodes FILE")
	case !sf.rolling && sf.maxParallelSaves != 1:
		return usageErr("--max-parallel-saves goes with --rolling")
	case !sf.rolling && len(args) > 1:
		return usageErr("save saves one server (got %d): --cluster ADDR --rolling saves a cluster node by node", len(args))
	}
	return nil
}

func (a *app) runSave(ctx context.Context, cf *connFlags, sf *saveFlags, args []string) (err error) {
	if err := sf.validate(args); err != nil {
		return err
	}
	var eps []source.Endpoint
	switch {
	case sf.cluster != "":
		if err := cf.clusterAlone(sf.cluster, args); err != nil {
			return err
		}
		eps, err = a.endpoints(ctx, cf, []string{sf.cluster})
	case sf.nodes != "":
		eps, err = a.nodesOnce(ctx, cf, sf.nodes, args)
	default:
		eps, err = a.explicit(ctx, cf, args, "save")
	}
	if err != nil {
		return err
	}
	s := &saveRun{a: a, sf: sf, clock: source.NewClock()}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := s.connect(ctx, eps); err != nil {
		return err
	}
	if err := s.openRecording(eps[0]); err != nil {
		return err
	}
	return s.drive(ctx)
}

// saveRun is one vkwatch save: the fleet it saves, what it records, and
// how it tells its progress.
type saveRun struct {
	a     *app
	sf    *saveFlags
	clock *source.Clock
	fleet *fleet.Fleet
	top   source.Topology
	conns []fleet.Connected
	rec   *live.Recording

	reports live.Reports
	out     *plain.Steps
}

// connect learns the fleet (the cluster of the seed eps[0], the servers
// of --nodes, or the one server) and reaches every node within
// --connect-timeout; none reachable is exit status 3.
func (s *saveRun) connect(ctx context.Context, eps []source.Endpoint) error {
	var proc *procmem.Reader
	if slices.ContainsFunc(eps, source.Endpoint.Local) {
		proc, _ = procmem.New() // no /proc: the memory check reads INFO alone
	}
	cfg := fleet.Config{
		Watch: watch.Config{Interval: s.sf.interval, ConnectTimeout: s.sf.connectTimeout},
		Clock: s.clock,
		Configure: func(m fleet.Member, c *watch.Config) {
			if proc != nil && m.Endpoint.Local() {
				c.Proc, c.Sched = proc.Read, proc.Sched
			}
		},
	}
	if s.sf.cluster != "" {
		s.fleet = fleet.NewCluster(eps[0], cfg)
	} else {
		s.fleet = fleet.NewList(live.MembersOf(eps), cfg)
	}
	var err error
	if s.top, s.conns, err = live.ConnectFleet(ctx, s.fleet); err != nil {
		return err
	}
	live.WarnNoPassword(ctx, s.a.stderr, eps)
	return nil
}

// openRecording starts --record: display addresses only, never a password.
func (s *saveRun) openRecording(ep source.Endpoint) error {
	if s.sf.record == "" {
		return nil
	}
	servers := make([]record.ServerInfo, len(s.conns))
	for i, c := range s.conns {
		servers[i] = record.ServerInfo{Node: c.Member.ID, Addr: c.Member.Endpoint.String(), Identity: c.Identity}
	}
	settings := map[string]string{"mode": "save", "interval": s.sf.interval.String(),
		"rolling": fmt.Sprint(s.sf.rolling), "max_parallel_saves": fmt.Sprint(s.sf.maxParallelSaves), "force": fmt.Sprint(s.sf.force)}
	if s.sf.cluster != "" {
		settings["cluster"] = ep.String()
	}
	if s.sf.nodes != "" {
		settings["nodes"] = s.sf.nodes
	}
	rec, err := live.Record(s.sf.record, record.JSONL, record.Header{VKWatch: vkwatchVersion(), Epoch: s.clock.Epoch(), Settings: settings, Servers: servers})
	if err != nil {
		return err
	}
	s.rec = rec
	return nil
}

// emit takes every event: to the recording and the reports.
func (s *saveRun) emit(ev source.Event) {
	if s.rec != nil {
		s.rec.Write(ev)
	}
	s.reports.Observe(ev)
}

// drive runs the roll (of one node, for save ADDR) and says how it ended.
func (s *saveRun) drive(ctx context.Context) error {
	s.out = plain.NewSteps(s.a.stdout, s.a.isTTY(), !s.sf.rolling)
	cfg := fleet.DriveConfig{
		Roll: roll.Config{MaxParallel: s.sf.maxParallelSaves, Force: s.sf.force,
			// One server named: the server decides, and says why not.
			IgnoreBusy: !s.sf.rolling},
		Ready:    s.sf.connectTimeout + 2*s.sf.interval,
		Emit:     s.emit,
		Progress: s.out.Update,
	}
	r, err := fleet.Drive(ctx, s.fleet, s.top, s.conns, cfg)
	s.out.Finish()
	switch {
	case errors.Is(err, fleet.ErrHeld):
		st, _ := roll.HeldAt(r)
		return fmt.Errorf("%s; nothing sent to it (--force sends it anyway)", words.ForkWarning(st.Node.Addr, st.Risk))
	case err != nil:
		return err
	}
	fmt.Fprintln(s.a.stdout, inert.Text(summary(r)))
	return nil
}

// summary is the last line of a roll that saved every node.
func summary(r *roll.Roll) string {
	steps := r.Steps()
	if len(steps) == 1 {
		return "saved " + steps[0].Node.Addr
	}
	return fmt.Sprintf("rolling save done: %d of %d nodes saved, one per shard", r.Progress().Done, len(steps))
}

// close flushes the recording and writes --report, with every report the
// run saw (a roll that stopped has some too).
func (s *saveRun) close() error {
	var errs []error
	if s.fleet != nil {
		errs = append(errs, s.fleet.Close())
	}
	if s.rec != nil {
		errs = append(errs, s.rec.Close())
	}
	if s.sf.report != "" && s.fleet != nil {
		errs = append(errs, s.reports.Write(s.sf.report))
	}
	return errors.Join(errs...)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

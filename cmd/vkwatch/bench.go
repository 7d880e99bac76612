package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/cluster"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/live"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/record"
)

type benchFlags struct {
	conn         *connFlags
	runs         int
	window       time.Duration
	triggerAt    time.Duration
	writers      int
	preload      int
	keys         int
	valueSize    int
	parallel     bool
	json         bool
	interval     time.Duration
	pingInterval time.Duration
	record       string
	cluster      string
	nodes        string
	perShard     bool
	methods      []string
}

func (a *app) benchCommand() *cobra.Command {
	bf := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench [ADDR ...] [-h HOST -p PORT | -s SOCKET | -u URI] [--methods fork,forkless] | --nodes FILE | --cluster ADDR [--per-shard]",
		Short: "Measure what BGSAVE costs each server under writers, headless, and print a table",
		Long: `bench measures what a BGSAVE costs, fork or forkless, without a UI: for each run it
starts W writers overwriting the vkwatch-prefixed dataset (which must exist:
--preload N creates it) and the PING probe, sends BGSAVE
at --trigger-at, waits for the save to end and the window to close, and collects
what the save cost. It prints, per server, COW, memory delta, save time, the
writers' ops/s, worst and p99 PING as mean / min / max over the runs, then a
verdict from those figures (the rule is in the README).
Progress goes to stderr; the table (or --json) to stdout.

--methods fork,forkless saves one Valkey 9.2 server both ways, on the same data
and load: the runs alternate, bench sets bgsave-default-method (CONFIG SET, read
back) before each, and puts the server's own setting back at the end, after
ctrl+c, SIGTERM, an error or a lost connection too (retrying for 15s; else it
prints the command that does it by hand). A server that cannot be set each way
(Redis, Valkey before 9.2, or 9.2 started without forkless-infrastructure-enabled
yes) is refused before anything is written. The verdict then says which method
the figures support on this host, and when that flips.

--interval is 150ms, not the monitor's 200ms: the seed sampled its container's
memory every 150ms, and bench's memory delta is the same measure.

--cluster ADDR runs it on every node of ADDR's cluster in turn (--per-shard: on
one node per shard, a replica where there is one), a table per node. A
replica's writers write to its primary, under a key prefix of the shard's
slots, and reach the replica by replication.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runBench(cmd.Context(), bf.conn, bf, args)
		},
	}
	bf.conn = connFlagsOf(cmd)
	fs := cmd.Flags()
	fs.IntVar(&bf.runs, "runs", 7, "runs per server")
	fs.DurationVar(&bf.window, "window", 12*time.Second, "length of each run")
	fs.DurationVar(&bf.triggerAt, "trigger-at", 2*time.Second, "when BGSAVE is sent within the window")
	fs.IntVar(&bf.writers, "writers", 8, "writers per server")
	fs.IntVar(&bf.preload, "preload", 0, "first create a dataset of N keys under the vkwatch: prefix")
	fs.IntVar(&bf.keys, "keys", 1_000_000, "keyspace the writers overwrite, when --preload is not given (it must exist: bench refuses otherwise)")
	fs.IntVar(&bf.valueSize, "value-size", 300, "bytes per value")
	fs.BoolVar(&bf.parallel, "parallel", false, "run the servers at the same time instead of one after the other")
	fs.BoolVar(&bf.json, "json", false, "print JSON instead of the table")
	fs.DurationVar(&bf.interval, "interval", 150*time.Millisecond, "INFO sampling interval (150ms, as the seed sampled its cgroup)")
	fs.DurationVar(&bf.pingInterval, "ping-interval", 2*time.Millisecond, "PING probe interval")
	fs.StringVar(&bf.record, "record", "", "record every sample and event to FILE (JSON Lines; FILE.zst or FILE.gz is compressed)")
	fs.StringVar(&bf.cluster, "cluster", "", "run on every node of the cluster ADDR is a node of, one after the other")
	fs.BoolVar(&bf.perShard, "per-shard", false, "with --cluster: one node per shard (a replica where there is one)")
	fs.StringVar(&bf.nodes, "nodes", "", "run on every server the file FILE names, one address or URL a line (# starts a comment), as if given as ADDR")
	fs.StringSliceVar(&bf.methods, "methods", nil, "save the one server each of these ways (fork,forkless), the runs alternating; --runs of each")
	return cmd
}

func (a *app) runBench(ctx context.Context, cf *connFlags, bf *benchFlags, args []string) (err error) {
	switch {
	case bf.runs < 1:
		return usageErr("--runs must be at least 1")
	case bf.window <= 0 || bf.triggerAt < 0 || bf.triggerAt >= bf.window:
		return usageErr("--trigger-at must fall inside --window")
	case bf.writers < 0 || bf.valueSize < 1 || bf.keys < 1 || bf.preload < 0:
		return usageErr("--writers, --keys, --value-size and --preload must be positive")
	case bf.interval < 10*time.Millisecond || bf.pingInterval < 100*time.Microsecond:
		return usageErr("--interval must be at least 10ms and --ping-interval at least 100µs")
	}
	if err := checkMethodsFlag(bf); err != nil {
		return err
	}
	targets, err := a.benchTargets(ctx, cf, bf, args)
	if err != nil {
		return err
	}

	keys := bf.keys
	if bf.preload > 0 {
		keys = bf.preload
	}
	cfg := bench.Config{
		Targets:      targets,
		Runs:         bf.runs,
		Window:       bf.window,
		TriggerAt:    bf.triggerAt,
		Writers:      bf.writers,
		Keys:         keys,
		ValueSize:    bf.valueSize,
		Preload:      bf.preload > 0,
		Parallel:     bf.parallel,
		Interval:     bf.interval,
		PingInterval: bf.pingInterval,
		Methods:      bf.methods,
		Progress:     func(msg string) { fmt.Fprintln(a.stderr, "vkwatch bench:", inert.Text(msg)) },
	}
	cfg.Clock = source.NewClock()
	if proc, err := procmem.New(); err == nil {
		cfg.Proc, cfg.Sched = proc.Read, proc.Sched
	}
	if bf.record != "" {
		settings := map[string]string{
			"mode": "bench", "runs": fmt.Sprint(bf.runs), "window": bf.window.String(),
			"trigger_at": bf.triggerAt.String(), "writers": fmt.Sprint(bf.writers),
			"interval": bf.interval.String(), "ping_interval": bf.pingInterval.String(),
		}
		if len(bf.methods) > 0 {
			settings["methods"] = strings.Join(bf.methods, ",")
		}
		servers := make([]record.ServerInfo, len(targets))
		for i, t := range targets {
			// The node id the events will carry: bench gives a target
			// without one its address's (bench.Target.Node).
			node := t.Node
			if node == "" {
				node = t.Save.Node()
			}
			servers[i] = record.ServerInfo{Node: node, Addr: t.Save.String()}
		}
		rec, err := live.Record(bf.record, record.JSONL, record.Header{VKWatch: vkwatchVersion(), Epoch: cfg.Clock.Epoch(), Settings: settings, Servers: servers})
		if err != nil {
			return err
		}
		defer func() {
			if cerr := rec.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		cfg.Events = func(ev source.Event) { rec.Write(ev) }
	}
	sums, err := bench.Bench(ctx, cfg)
	var re *bench.RestoreError
	if errors.As(err, &re) {
		// Said here, loudly, whatever ended the runs: ctrl+c's error is
		// not printed, this must be.
		fmt.Fprintln(a.stderr, "vkwatch bench: WARNING:", inert.Text(re.Error()))
		if re.Run != nil {
			return keyspaceRefusal(re.Run, "bench")
		}
		if werr := result.Write(a.stdout, bf.json, sums); werr != nil {
			return werr
		}
		return withCode(exitError, errors.New("the server's bgsave-default-method was not put back (above)"))
	}
	if err != nil {
		return keyspaceRefusal(err, "bench")
	}
	return result.Write(a.stdout, bf.json, sums)
}

// benchTargets are the servers bench runs on: the addresses given, those
// --nodes' file names (read once, at start), or the nodes of the cluster
// --cluster names (found once, at start).
func (a *app) benchTargets(ctx context.Context, cf *connFlags, bf *benchFlags, args []string) ([]bench.Target, error) {
	switch {
	case bf.cluster == "" && bf.perShard:
		return nil, usageErr("--per-shard goes with --cluster")
	case bf.cluster == "":
		var eps []source.Endpoint
		var err error
		if bf.nodes != "" {
			eps, err = a.nodesOnce(ctx, cf, bf.nodes, args)
		} else {
			eps, err = a.explicit(ctx, cf, args, "bench")
		}
		if err != nil {
			return nil, err
		}
		if len(bf.methods) > 0 && len(eps) != 1 {
			return nil, usageErr("--methods saves one server both ways: give one server, not %d", len(eps))
		}
		if err := live.Reach(ctx, a.stderr, eps); err != nil {
			return nil, err
		}
		targets := make([]bench.Target, len(eps))
		for i, ep := range eps {
			targets[i] = bench.Target{Save: ep}
		}
		return targets, nil
	}
	if err := cf.clusterAlone(bf.cluster, args); err != nil {
		return nil, err
	}
	if bf.nodes != "" {
		return nil, usageErr("--nodes and --cluster both name the fleet: give one")
	}
	if bf.parallel {
		// Several forks at once on a cluster's hosts is what bench on a
		// cluster must not do.
		return nil, usageErr("--parallel does not go with --cluster: the nodes run one after the other")
	}
	eps, err := a.endpoints(ctx, cf, []string{bf.cluster})
	if err != nil {
		return nil, err
	}
	d := cluster.New(eps[0], cluster.Config{})
	defer d.Close()
	top, err := d.Discover(ctx)
	if err != nil {
		return nil, withCode(exitConnect, err)
	}
	targets, skipped := bench.ClusterTargets(eps[0], top, bf.perShard)
	for _, s := range skipped {
		fmt.Fprintln(a.stderr, "vkwatch bench: skipping", inert.Text(s))
	}
	if len(targets) == 0 {
		return nil, withCode(exitConnect, fmt.Errorf("%s: no node of the cluster to run on", eps[0]))
	}
	return targets, nil
}

// checkMethodsFlag refuses a --methods bench cannot run, before anything
// is dialled: fork and forkless each once, on one server alone.
func checkMethodsFlag(bf *benchFlags) error {
	if len(bf.methods) == 0 {
		return nil
	}
	if err := bench.CheckMethods(bf.methods); err != nil {
		return withCode(exitUsage, err)
	}
	switch {
	case bf.cluster != "":
		return usageErr("--methods saves one server both ways: not with --cluster")
	case bf.parallel:
		return usageErr("--methods saves one server both ways: not with --parallel")
	}
	return nil
}

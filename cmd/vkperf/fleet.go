package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
)

// The fleet view's cost (issue 11): vkwatch --cluster on an idle local
// cluster of six nodes (three primaries, a replica each), drawing the
// fleet view in a 200x50 pseudo-terminal, against vkwatch on two idle
// servers at defaults, alternating, a few rounds.

const (
	fleetRounds     = 3
	fleetSpan       = 20 * time.Second
	maxFleetCPURate = 1.3      // times vkwatch's CPU on two servers
	maxFleetRSS     = 60 << 20 // bytes
)

// runFleetCost measures it and returns its row of the table.
func runFleetCost(ctx context.Context, cfg config) ([]check, error) {
	nodes, stop, err := startLocalCluster(ctx)
	defer stop()
	if err != nil {
		return nil, fmt.Errorf("a six-node cluster: %w", err)
	}
	two := nodes[:2]
	cluster := []string{cfg.vkwatch, "--cluster", nodes[0].Addr}
	var fleetCPU, twoCPU []float64
	var rss int64
	fmt.Fprintf(cfg.out, "fleet: vkwatch --cluster %s (6 nodes) vs vkwatch %s %s, %d rounds of %s each, alternating\n",
		nodes[0].Addr, two[0].Addr, two[1].Addr, fleetRounds, fleetSpan)
	for round := range fleetRounds {
		err := alternate(round,
			func() error {
				// Two connections per node (sampler and probe), and the
				// discovery's on the first.
				r, err := measure(ctx, cfg, nodes, fleetSpan, true, cluster, 2)
				fleetCPU, rss = append(fleetCPU, r.cpu), max(rss, r.rssMax)
				return err
			},
			func() error {
				r, err := measureVKWatch(ctx, cfg, two, fleetSpan, true, nil)
				twoCPU = append(twoCPU, r.cpu)
				return err
			})
		if err != nil {
			return nil, err
		}
	}
	f, t := summarize(fleetCPU), summarize(twoCPU)
	ratio := f.Mean / t.Mean
	return []check{{
		Target: fmt.Sprintf("Own cost: vkwatch --cluster on an idle six-node local cluster at defaults, the fleet view at 200x50: CPU <= %.1f x two servers', RSS <= %d MB",
			maxFleetCPURate, maxFleetRSS>>20),
		Measured: fmt.Sprintf("%.2fx (fleet %.2f%% of a core, %.2f-%.2f%%; two servers %.2f%%, %.2f-%.2f%%; %d alternating rounds of %s); RSS max %.1f MiB",
			ratio, 100*f.Mean, 100*f.Min, 100*f.Max, 100*t.Mean, 100*t.Min, 100*t.Max, fleetRounds, fleetSpan, mib(rss)),
		Verdict: verdict(ratio <= maxFleetCPURate && rss <= maxFleetRSS),
	}}, nil
}

// startLocalCluster starts six cluster-enabled servers on free loopback
// ports, joins them with redis-cli --cluster create (three primaries, a
// replica each) and waits until every node says cluster_state:ok and no
// replica's full sync is running. stop stops them all.
func startLocalCluster(ctx context.Context) ([]*testServer, func(), error) {
	var nodes []*testServer
	stop := func() {
		for _, n := range nodes {
			n.stop()
		}
	}
	var addrs []string
	for range 6 {
		s, err := server.Start(ctx, server.Options{Args: []string{"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--repl-diskless-sync-delay", "0"}})
		if err != nil {
			return nodes, stop, err
		}
		nodes = append(nodes, &testServer{Server: s, admin: redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1, MaxRetries: -1})})
		addrs = append(addrs, s.Addr)
	}
	cli, err := toolPath("redis-cli", "valkey-cli")
	if err != nil {
		return nodes, stop, fmt.Errorf("redis-cli or valkey-cli is needed to create the cluster: %w", err)
	}
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return nodes, stop, fmt.Errorf("%s --cluster create: %w\n%s", cli, err, out)
	}
	err = waitUntil(ctx, "the cluster to be ok and idle", 60*time.Second, func() (bool, error) {
		for _, n := range nodes {
			info, err := n.admin.Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false, nil
			}
			if busy, err := n.infoInt(ctx, "persistence", "rdb_bgsave_in_progress"); err != nil || busy != 0 {
				return false, nil
			}
		}
		return true, nil
	})
	return nodes, stop, err
}

package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/cluster"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestBenchCluster runs the experiment in miniature on every node of a real
// 2x1 cluster in turn: each replica saves while its primary takes the
// writes, and every write lands on its shard (none refused with MOVED).
func TestBenchCluster(t *testing.T) {
	c := servertest.StartClusterWith(t, servertest.ClusterOptions{Primaries: 2, ReplicasPerPrimary: 1,
		Args: []string{"--rdb-key-save-delay", "100"}})
	seed, err := source.ParseAddress(c.Nodes()[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	d := cluster.New(seed, cluster.Config{})
	top, err := d.Discover(context.Background())
	d.Close()
	if err != nil {
		t.Fatal(err)
	}

	per, skipped := ClusterTargets(seed, top, true)
	if len(per) != 2 || len(skipped) != 0 {
		t.Fatalf("per shard: %d targets, skipped %v; want 2", len(per), skipped)
	}
	for _, tg := range per {
		if !strings.HasPrefix(tg.Label, "replica of ") || tg.Write.Addr == tg.Save.Addr {
			t.Errorf("per shard target %+v: want a replica written through its primary", tg)
		}
	}

	targets, _ := ClusterTargets(seed, top, false)
	if len(targets) != 4 {
		t.Fatalf("%d targets, want the 4 nodes", len(targets))
	}
	var progress progressLog
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sums, err := Bench(ctx, Config{
		Targets:   targets,
		Runs:      1,
		Window:    1500 * time.Millisecond,
		TriggerAt: 300 * time.Millisecond,
		Writers:   2,
		Keys:      5000,
		Preload:   true,
		Progress:  progress.add,
	})
	if err != nil {
		t.Fatalf("Bench: %v\nprogress:\n%s", err, progress.String())
	}
	for _, l := range progress.all() {
		if strings.Contains(l, "errors") {
			t.Errorf("writers saw errors: %s", l)
		}
	}
	loads := 0
	for _, l := range progress.all() {
		if strings.Contains(l, "loading 5000 keys") {
			loads++
		}
	}
	if loads != 2 {
		t.Errorf("%d datasets loaded, want one per shard:\n%s", loads, progress.String())
	}
	for i, s := range sums {
		if s.Addr != targets[i].Save.String() || s.Label != targets[i].Label || len(s.Runs) != 1 {
			t.Fatalf("summary %d: %s (%s), %d runs", i, s.Addr, s.Label, len(s.Runs))
		}
		r := s.Runs[0]
		if r.Report.Kind != source.SaveFork || r.Report.Status != "ok" || r.Report.Node != targets[i].Node || r.WriterOps <= 0 {
			t.Errorf("%s: %s %s on node %s, writers %.0f ops/s", s.Addr, r.Report.Kind, r.Report.Status, r.Report.Node, r.WriterOps)
		}
	}
	// Each shard holds its own dataset, replicated: 5000 keys on every node.
	for _, n := range c.Nodes() {
		if k, err := c.Client(n).DBSize(ctx).Result(); err != nil || k != 5000 {
			t.Errorf("%s holds %d keys (%v), want its shard's 5000", n.Addr, k, err)
		}
	}
	var out strings.Builder
	if err := result.WriteTables(&out, sums); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n== "); n != 3 || !strings.HasPrefix(out.String(), "== "+targets[0].Save.String()) {
		t.Errorf("WriteTables: %d titles after the first, want one table per node:\n%s", n, out.String())
	}
}

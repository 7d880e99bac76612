//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestSessionCluster: vkwatch --cluster on one node of a real 3x1 cluster
// opens the fleet view with the six nodes, says so with the PING interval
// per node, opens a node's full pane and comes back, follows a failover
// on screen and into its recording, and the recording replays as a fleet.
func TestSessionCluster(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	rec := filepath.Join(t.TempDir(), "fleet.jsonl")
	s := startSession(t, childEnv(), "--cluster", c.Nodes()[0].Addr, "--record", rec)
	s.waitScreen(15*time.Second, "the fleet view of the cluster's six nodes", func(f shot) bool {
		return strings.Contains(f.String(), "cluster: 6 nodes in 3 shards (CLUSTER SHARDS from ") &&
			strings.Contains(f.String(), "PING every 6ms per node") && len(sampledRows(f, c.Nodes())) == 6
	})
	// enter: the selected node's full pane, with its history; esc: back.
	s.press("\r")
	s.waitScreen(5*time.Second, "a node's pane", func(f shot) bool {
		return strings.Contains(f.String(), c.Nodes()[0].Addr+" · redis") && sampled(f.String()) && strings.Contains(f.String(), "esc fleet")
	})
	s.press("\x1b")
	s.waitScreen(5*time.Second, "the fleet view again", func(f shot) bool { return len(sampledRows(f, c.Nodes())) == 6 })

	rep := c.Replicas()[0]
	c.Failover(rep)
	s.waitScreen(10*time.Second, "the failover on screen", func(f shot) bool {
		return strings.Contains(rowOf(f, rep.Addr), "primary")
	})
	waitRecorded(t, rec, "the failover", func(r *record.Recording) bool {
		for _, ev := range r.Events {
			if ev.Kind != source.EventTopology {
				continue
			}
			for _, ch := range ev.Topology.Changes {
				if ch.Kind == source.RoleChanged && string(ch.Node) == rep.ID && ch.To == source.RolePrimary {
					return true
				}
			}
		}
		return false
	})
	s.quit()

	r := readRecording(t, rec)
	if len(r.Header.Servers) != 6 || r.Header.Settings["ping_interval"] != "6ms" || r.Header.Settings["cluster"] != c.Nodes()[0].Addr {
		t.Errorf("header: %d servers, settings %v", len(r.Header.Servers), r.Header.Settings)
	}
	sampledNodes := map[source.NodeID]bool{}
	for _, ev := range r.Events {
		if ev.Kind == source.EventSample {
			sampledNodes[ev.Node] = true
		}
	}
	for _, n := range c.Nodes() {
		if !sampledNodes[source.NodeID(n.ID)] {
			t.Errorf("no sample of %s (%s) recorded under its node id", n.Addr, n.ID)
		}
	}
	if r.Events[0].Kind != source.EventTopology || len(r.Events[0].Topology.Nodes()) != 6 {
		t.Errorf("the recording starts with %s, want the topology", r.Events[0].Kind)
	}

	p := startSession(t, childEnv(), "replay", rec, "--speed", "4")
	p.waitScreen(15*time.Second, "the fleet recording replayed as a fleet", func(f shot) bool {
		return strings.Contains(f.String(), "replay of ") && strings.Contains(f.String(), "cluster: 6 nodes in 3 shards") &&
			len(sampledRows(f, c.Nodes())) == 6
	})
	p.quit()
}

// TestSessionFleetRollingSave: on a real 3x1 cluster, the fleet view at
// 80x24 shows six rows; B names the rolling save's nodes, B again starts
// it, and it saves exactly one replica per shard, one at a time (every
// node's rdb_bgsave_in_progress polled throughout); r shows one report row
// per node saved; the recording replays as the fleet view.
func TestSessionFleetRollingSave(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	c.Fill(3000, 100)
	for _, n := range c.Nodes() {
		// About 1,000 keys a shard at 400 µs each: saves of ~0.4 s, long
		// enough to be seen running by the poller and on screen.
		if err := c.Client(n).ConfigSet(context.Background(), "rdb-key-save-delay", "400").Err(); err != nil {
			t.Fatal(err)
		}
	}
	rec := filepath.Join(t.TempDir(), "roll.jsonl")
	s := startSessionSized(t, 24, 80, childEnv(), "--cluster", c.Nodes()[0].Addr, "--record", rec)
	s.waitScreen(15*time.Second, "six rows at 80x24", func(f shot) bool { return len(sampledRows(f, c.Nodes())) == 6 })
	before := c.RDBSaves(t)
	p := c.WatchSaves(t)
	s.press("B")
	f := s.waitScreen(5*time.Second, "the confirmation line", func(f shot) bool {
		return strings.Contains(f.String(), "rolling BGSAVE of 3 nodes, one per shard") && strings.Contains(f.String(), "B again: start the rolling save")
	})
	for _, r := range c.Replicas() {
		if !strings.Contains(f.String(), r.Addr) {
			t.Errorf("the confirmation does not name replica %s:\n%s", r.Addr, f)
		}
	}
	if p.SawAny() {
		t.Fatalf("a save ran before the confirmation")
	}
	s.press("B")
	s.waitScreen(60*time.Second, "the rolling save done", func(f shot) bool {
		return strings.Contains(f.String(), "rolling save done: 3 of 3 saved")
	})
	p.Stop()
	after := c.RDBSaves(t)
	saved := map[string]bool{}
	for id, v := range after {
		if before[id] != v {
			saved[id] = true
		}
	}
	for _, pr := range c.Primaries() {
		n := 0
		for _, r := range c.ReplicasOf(pr) {
			if saved[r.ID] && p.Seen(r.Addr) {
				n++
			}
		}
		if n != 1 || saved[pr.ID] {
			t.Errorf("shard of %s: %d replicas saved, primary saved %v; want one replica", pr.Addr, n, saved[pr.ID])
		}
	}
	if len(saved) != 3 {
		t.Errorf("saved %v, want one replica in each of 3 shards", saved)
	}
	if n := p.MaxAtOnce(); n != 1 {
		t.Errorf("at most %d nodes saving at once (%v), want 1", n, p.Pairs())
	}
	// r: one report row per node saved.
	s.press("r")
	f = s.waitScreen(5*time.Second, "the reports table", func(f shot) bool { return strings.Contains(f.String(), "save reports · ") })
	for _, n := range c.Nodes() {
		rows := 0
		for _, l := range strings.Split(f.String(), "\n") {
			if strings.HasPrefix(l, "│") && strings.Contains(l, n.Addr+" ") {
				rows++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[saved[n.ID]]; rows != want {
			t.Errorf("%s: %d report rows, want %d:\n%s", n.Addr, rows, want, f)
		}
	}
	s.quit()

	r := startSessionSized(t, 24, 80, childEnv(), "replay", rec, "--speed", "4")
	r.waitScreen(15*time.Second, "the replay's fleet view", func(f shot) bool {
		return strings.Contains(f.String(), "replay ") && len(sampledRows(f, c.Nodes())) == 6
	})
	r.quit()
}

// TestSessionFiveAddresses: five explicit addresses are the fleet view's
// five rows, one shard each, PINGed every 5 ms each; b saves the selected
// one, and B only plans a rolling save, which any other key cancels: it
// never forks them all.
func TestSessionFiveAddresses(t *testing.T) {
	var addrs []string
	srvs := make([]*server.Server, 5)
	for i := range srvs {
		srvs[i] = servertest.StartDefault(t)
		addrs = append(addrs, srvs[i].Addr)
	}
	s := startSession(t, childEnv(), addrs...)
	var ns []*servertest.ClusterNode
	for _, srv := range srvs {
		ns = append(ns, &servertest.ClusterNode{Server: srv})
	}
	s.waitScreen(15*time.Second, "five servers", func(f shot) bool {
		return strings.Contains(f.String(), "5 servers, one shard each") && strings.Contains(f.String(), "PING every 5ms per node") &&
			len(sampledRows(f, ns)) == 5
	})
	// One key at a time, each seen on screen: the selection follows.
	for i := 1; i <= 4; i++ {
		s.press("j")
		s.waitScreen(5*time.Second, fmt.Sprintf("row %d selected", i+1), func(f shot) bool { return strings.HasPrefix(rowOf(f, addrs[i]), "▸") })
	}
	s.press("b")
	s.waitScreen(5*time.Second, "b's answer", func(f shot) bool {
		return strings.Contains(f.String(), "BGSAVE on "+addrs[4]+": Background saving started")
	})
	s.press("B")
	s.waitScreen(5*time.Second, "B's plan", func(f shot) bool { return strings.Contains(f.String(), "rolling BGSAVE of 5 nodes") })
	s.press("o")
	f := s.waitScreen(5*time.Second, "the plan cancelled", func(f shot) bool {
		return !strings.Contains(f.String(), "rolling BGSAVE") && strings.Contains(f.String(), "sorted by memory")
	})
	if strings.Contains(f.String(), "sending") {
		t.Errorf("B sent something:\n%s", f)
	}
	for i, srv := range srvs {
		want := int64(0)
		if i == 4 {
			want = 1
		}
		if n := forks(t, servertest.Client(t, srv)); n != want {
			t.Errorf("%s forked %d times, want %d (B must not save all five)", srv.Addr, n, want)
		}
	}
	s.quit()
}

// rowOf is the fleet view's row line of the node at addr ("" when none
// shows): the line with its address and a role, not a replica's "of".
func rowOf(f shot, addr string) string {
	for _, l := range strings.Split(f.String(), "\n") {
		if !strings.Contains(l, addr+" ") || strings.Contains(l, "of "+addr) {
			continue
		}
		for _, role := range []string{" pri ", " rep ", " primary ", " replica ", " n/a "} {
			if strings.Contains(l, role) {
				return l
			}
		}
	}
	return ""
}

// sampledRows are the nodes whose row shows a sample (their memory).
func sampledRows(f shot, nodes []*servertest.ClusterNode) []string {
	var out []string
	for _, n := range nodes {
		if strings.Contains(rowOf(f, n.Addr), "MiB") {
			out = append(out, n.Addr)
		}
	}
	return out
}

// waitRecorded polls a recording being written until cond holds.
func waitRecorded(t *testing.T, path, what string, cond func(*record.Recording) bool) {
	t.Helper()
	servertest.WaitFor(t, 15*time.Second, what+" in the recording", func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		r, err := record.Read(f)
		return err == nil && cond(r)
	})
}

func readRecording(t *testing.T, path string) *record.Recording {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := record.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

//go:build linux

package main

import (
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
// watches all six, says so with the PING interval per node, follows a
// failover into its recording, and the recording replays.
func TestSessionCluster(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	rec := filepath.Join(t.TempDir(), "fleet.jsonl")
	s := startSession(t, childEnv(), "--cluster", c.Nodes()[0].Addr, "--record", rec)
	s.waitScreen(15*time.Second, "the cluster's six nodes", func(f shot) bool {
		return strings.Contains(f.String(), "cluster: 6 nodes in 3 shards (CLUSTER SHARDS) · PING every 6ms per node") &&
			strings.Contains(f.String(), "pane 1/6") && sampled(f.String())
	})
	// Every node has its pane (the fleet view will show them as rows).
	seen := map[string]bool{}
	for i := 1; i <= 6; i++ {
		f := s.waitScreen(5*time.Second, fmt.Sprintf("pane %d sampled", i), func(f shot) bool {
			return strings.Contains(f.String(), fmt.Sprintf("pane %d/6", i)) && sampled(f.String())
		})
		for _, n := range c.Nodes() {
			if strings.Contains(f.String(), n.Addr+" · redis") {
				seen[n.Addr] = true
			}
		}
		s.press("\t")
	}
	if len(seen) != 6 {
		t.Errorf("panes of %d nodes seen, want 6: %v", len(seen), seen)
	}
	rep := c.Replicas()[0]
	c.Failover(rep)
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
	p.waitScreen(15*time.Second, "the fleet recording replayed", func(f shot) bool {
		return strings.Contains(f.String(), "replay of ") && strings.Contains(f.String(), "pane 1/6") && sampled(f.String())
	})
	p.quit()
}

// TestSessionFiveAddresses: five explicit addresses are five panes (until
// the fleet view), PINGed every 5 ms each, and B does not fork them all.
func TestSessionFiveAddresses(t *testing.T) {
	var args, addrs []string
	srvs := make([]*server.Server, 5)
	for i := range srvs {
		srvs[i] = servertest.Start(t, server.Options{})
		addrs = append(addrs, srvs[i].Addr)
	}
	args = append(args, addrs...)
	s := startSession(t, childEnv(), args...)
	s.waitScreen(15*time.Second, "five servers", func(f shot) bool {
		return strings.Contains(f.String(), "5 servers · PING every 5ms per node") && strings.Contains(f.String(), "pane 1/5") &&
			strings.Contains(f.String(), addrs[0]) && sampled(f.String())
	})
	s.press("\t\t\t\t")
	s.waitScreen(5*time.Second, "the fifth pane", func(f shot) bool {
		return strings.Contains(f.String(), addrs[4]+" · redis") && strings.Contains(f.String(), "pane 5/5")
	})
	s.press("b")
	s.waitScreen(5*time.Second, "b's answer", func(f shot) bool {
		return strings.Contains(f.String(), "BGSAVE on "+addrs[4]+": Background saving started")
	})
	// Every key clears the footer: its answer gone says B was read, and
	// no "sending BGSAVE to …" in its place says B sent nothing.
	s.press("B")
	f := s.waitScreen(5*time.Second, "B read", func(f shot) bool { return !strings.Contains(f.String(), "Background saving started") })
	if strings.Contains(f.String(), "sending") {
		t.Errorf("B sent something:\n%s", f)
	}
	for i, srv := range srvs {
		want := int64(0)
		if i == 4 {
			want = 1
		}
		if n := forks(t, adminClient(t, srv, "")); n != want {
			t.Errorf("%s forked %d times, want %d (B must not save all five)", srv.Addr, n, want)
		}
	}
	s.quit()
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

package cluster

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

// rolesOf is node id -> primary id ("" for a primary), as servertest's
// Cluster.Roles says it.
func rolesOf(top source.Topology) map[string]string {
	out := map[string]string{}
	for _, n := range top.Nodes() {
		out[string(n.ID)] = string(n.Primary)
	}
	return out
}

// follow runs d until the test ends and hands out what it emits.
type follow struct {
	ch   chan source.Topology
	seen []source.Topology
}

func runDiscoverer(t *testing.T, d *Discoverer) *follow {
	ctx, cancel := context.WithCancel(context.Background())
	f := &follow{ch: make(chan source.Topology, 100)}
	var wg sync.WaitGroup
	wg.Go(func() { d.Run(ctx, func(top source.Topology) { f.ch <- top }) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		d.Close()
	})
	return f
}

// until returns the first topology emitted from now on for which cond holds.
func (f *follow) until(t *testing.T, within time.Duration, what string, cond func(source.Topology) bool) source.Topology {
	t.Helper()
	top, ok := servertest.Receive(f.ch, within, func(top source.Topology) bool {
		f.seen = append(f.seen, top)
		return cond(top)
	})
	if !ok {
		t.Fatalf("no topology with %s within %s (last: %+v)", what, within, f.seen[max(len(f.seen)-1, 0):])
	}
	return top
}

// anyChange reports whether one of the topologies reports a change of
// kind for node id.
func anyChange(tops []source.Topology, kind source.ChangeKind, id string) bool {
	for _, top := range tops {
		for _, c := range top.Changes {
			if c.Kind == kind && string(c.Node) == id {
				return true
			}
		}
	}
	return false
}

// TestDiscoverFollowsCluster: discovery finds all six nodes with the right
// roles by CLUSTER SHARDS and CLUSTER NODES alike, then follows the real
// cluster through a failover, the death of the seed node and a node added.
func TestDiscoverFollowsCluster(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	c.Fill(300, 100)
	seed := c.Replicas()[0]
	d := New(sourcetest.Endpoint(t, seed.Addr), Config{Every: 200 * time.Millisecond})
	top, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if top.Via != "CLUSTER SHARDS" || !top.Cluster || top.From != seed.Addr {
		t.Errorf("Via %q Cluster %v From %q, want CLUSTER SHARDS from %s", top.Via, top.Cluster, top.From, seed.Addr)
	}
	if got, want := rolesOf(top), c.Roles(); !reflect.DeepEqual(got, want) {
		t.Errorf("roles %v\nwant  %v", got, want)
	}
	slots := 0
	for _, s := range top.Shards {
		for _, r := range s.Slots {
			slots += r.End - r.Start + 1
		}
		if s.Nodes[0].Role != source.RolePrimary {
			t.Errorf("shard %v does not start with its primary", s)
		}
	}
	if slots != 16384 || len(top.Shards) != 3 {
		t.Errorf("%d shards covering %d slots, want 3 covering 16384", len(top.Shards), slots)
	}
	for _, n := range top.Nodes() {
		if c.Node(string(n.ID)).Addr != n.Addr {
			t.Errorf("node %s at %s, want %s", n.ID, n.Addr, c.Node(string(n.ID)).Addr)
		}
	}

	// The same cluster through CLUSTER NODES (servers before 7.0).
	old := New(sourcetest.Endpoint(t, seed.Addr), Config{})
	old.noShards = true
	otop, err := old.Discover(context.Background())
	old.Close()
	if err != nil {
		t.Fatal(err)
	}
	if otop.Via != "CLUSTER NODES" || !reflect.DeepEqual(shapeOf(otop.Shards), shapeOf(top.Shards)) {
		t.Errorf("CLUSTER NODES (%s) gives %+v\nCLUSTER SHARDS gives %+v", otop.Via, shapeOf(otop.Shards), shapeOf(top.Shards))
	}

	f := runDiscoverer(t, d)

	// A failover: the roles swap.
	primary := c.Primaries()[0]
	rep := c.ReplicasOf(primary)[0]
	c.Failover(rep)
	f.until(t, 10*time.Second, "the roles of "+rep.Addr+" and "+primary.Addr+" swapped", func(top source.Topology) bool {
		r := rolesOf(top)
		return r[rep.ID] == "" && r[primary.ID] == rep.ID
	})
	if !anyChange(f.seen, source.RoleChanged, rep.ID) || !anyChange(f.seen, source.RoleChanged, primary.ID) {
		t.Errorf("no role change reported for %s and %s in %+v", rep.Addr, primary.Addr, f.seen)
	}

	// The seed dies: another node answers and reports it failed.
	c.Kill(seed)
	top = f.until(t, 15*time.Second, "the seed marked failed", func(top source.Topology) bool {
		n, ok := top.Node(source.NodeID(seed.ID))
		return ok && n.Health == source.HealthFailed && top.Err == ""
	})
	if top.From == seed.Addr {
		t.Errorf("the dead seed answered")
	}

	// A node added later appears.
	added := c.AddNode(c.Primaries()[1])
	top = f.until(t, 10*time.Second, "the added node", func(top source.Topology) bool {
		n, ok := top.Node(source.NodeID(added.ID))
		return ok && n.Role == source.RoleReplica
	})
	if !anyChange(f.seen, source.NodeAdded, added.ID) {
		t.Errorf("no NodeAdded change for %s in %+v", added.Addr, f.seen)
	}
}

func TestDiscoverRefusesAPlainServer(t *testing.T) {
	s := servertest.StartDefault(t)
	d := New(sourcetest.Endpoint(t, s.Addr), Config{})
	defer d.Close()
	_, err := d.Discover(context.Background())
	if !errors.Is(err, ErrNotCluster) || !strings.Contains(err.Error(), s.Addr) {
		t.Fatalf("Discover of a plain server: %v, want %v naming %s", err, ErrNotCluster, s.Addr)
	}
}

func TestDiscoverNobodyThere(t *testing.T) {
	port := servertest.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	d := New(sourcetest.Endpoint(t, addr), Config{Timeout: time.Second})
	defer d.Close()
	_, err := d.Discover(context.Background())
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Discover of nothing: %v, want connection refused naming %s", err, addr)
	}
}

// Every node is reached with the seed's credentials, database and TLS
// settings, at its own address; a unix socket seed reaches nodes by TCP.
func TestNodeEndpoint(t *testing.T) {
	seed := source.Endpoint{Network: "unix", Addr: "/run/valkey.sock", Username: "u", Password: "p", DB: 0,
		TLS: source.TLSOptions{Enabled: true, CACert: "ca.pem", SNI: "cache.internal"}}
	got := NodeEndpoint(seed, source.TopologyNode{Addr: "10.0.0.8:6380"})
	want := seed
	want.Network, want.Addr = "tcp", "10.0.0.8:6380"
	if got != want {
		t.Errorf("NodeEndpoint = %+v\nwant %+v", got, want)
	}
}

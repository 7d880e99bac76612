package servertest

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
)

// ClusterOptions say how StartClusterWith builds a cluster. Zero values are
// the defaults of StartCluster.
type ClusterOptions struct {
	Primaries          int
	ReplicasPerPrimary int
	// NodeTimeout is --cluster-node-timeout: how long a silent node takes
	// to be suspected, and so how fast a killed node shows as failed and
	// a replica is promoted. Default 1s, small enough for fast tests and
	// large enough not to flap on a busy two-core machine.
	NodeTimeout time.Duration
	// Args are extra configuration for every node.
	Args []string
	// Within bounds each wait for the cluster to settle; default 30s.
	Within time.Duration
}

// Cluster is a real Redis or Valkey Cluster of local servers, each a child
// process on a free loopback port with a directory of its own, stopped when
// the test ends.
type Cluster struct {
	t    testing.TB
	opts ClusterOptions

	mu      sync.Mutex
	nodes   []*ClusterNode
	clients map[*ClusterNode]*redis.Client
}

// ClusterNode is one server of a Cluster.
type ClusterNode struct {
	*server.Server
	// ID is the node's 40-character cluster node id: it keeps it across
	// Kill and Restart (nodes.conf stays in its directory).
	ID string
}

// StartCluster starts primaries x (1 + replicasPerPrimary) servers with
// --cluster-enabled yes, joins them with CLUSTER MEET, gives the primaries
// the 16384 slots in equal ranges with CLUSTER ADDSLOTSRANGE and makes the
// others their replicas with CLUSTER REPLICATE, in the order of Nodes:
// the primaries first, then the replicas of the first primary, of the
// second, and so on. It returns when every node says cluster_state:ok,
// every node sees the same roles, every replica's link is up and no save
// (a full sync) runs anywhere. A cluster that cannot be started fails the
// test.
func StartCluster(t testing.TB, primaries, replicasPerPrimary int) *Cluster {
	t.Helper()
	return StartClusterWith(t, ClusterOptions{Primaries: primaries, ReplicasPerPrimary: replicasPerPrimary})
}

// StartClusterWith is StartCluster with options.
func StartClusterWith(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	if opts.Primaries < 1 {
		t.Fatalf("a cluster needs at least one primary, asked for %d", opts.Primaries)
	}
	if opts.NodeTimeout <= 0 {
		opts.NodeTimeout = time.Second
	}
	if opts.Within <= 0 {
		opts.Within = 30 * time.Second
	}
	c := &Cluster{t: t, opts: opts, clients: map[*ClusterNode]*redis.Client{}}
	total := opts.Primaries * (1 + opts.ReplicasPerPrimary)
	for range total {
		c.startNode()
	}
	// A distinct config epoch per node before they meet, as redis-cli
	// --cluster create does: no epoch collisions to resolve later.
	for i, n := range c.nodes {
		c.do(n, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
	}
	for _, n := range c.nodes[1:] {
		c.meet(n)
	}
	for i := 0; i < opts.Primaries; i++ {
		lo, hi := i*16384/opts.Primaries, (i+1)*16384/opts.Primaries-1
		c.do(c.nodes[i], "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi))
	}
	c.waitKnown(c.nodes)
	for i := 0; i < opts.Primaries; i++ {
		for r := 0; r < opts.ReplicasPerPrimary; r++ {
			rep := c.nodes[opts.Primaries+i*opts.ReplicasPerPrimary+r]
			c.do(rep, "CLUSTER", "REPLICATE", c.nodes[i].ID)
		}
	}
	c.WaitOK()
	c.WaitIdle()
	return c
}

// nodeArgs are the configuration of every node.
func (c *Cluster) nodeArgs() []string {
	return append([]string{
		"--cluster-enabled", "yes",
		// Relative to the node's own directory (its working directory).
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(c.opts.NodeTimeout.Milliseconds(), 10),
		// A replica's full sync streams at once instead of waiting 5 s
		// for more replicas to join it.
		"--repl-diskless-sync-delay", "0",
	}, c.opts.Args...)
}

// startNode starts one more server, not yet part of the cluster.
func (c *Cluster) startNode() *ClusterNode {
	c.t.Helper()
	s := Start(c.t, server.Options{Args: c.nodeArgs()})
	n := &ClusterNode{Server: s}
	n.ID = c.do(n, "CLUSTER", "MYID")
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	return n
}

// meet introduces n to the first node of the cluster that is up.
func (c *Cluster) meet(n *ClusterNode) {
	c.t.Helper()
	for _, m := range c.Nodes() {
		if m != n && c.alive(m) {
			c.do(n, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(m.Port))
			return
		}
	}
	c.t.Fatalf("no live node to introduce %s to", n.Addr)
}

// Nodes returns every node started, in order, dead or alive.
func (c *Cluster) Nodes() []*ClusterNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*ClusterNode(nil), c.nodes...)
}

// Node returns the node with the given cluster id, nil when none.
func (c *Cluster) Node(id string) *ClusterNode {
	for _, n := range c.Nodes() {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Client returns a client of the test's own on n (see Client), kept for
// the cluster's life.
func (c *Cluster) Client(n *ClusterNode) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.clients[n]
	if cl == nil {
		cl = Client(c.t, n.Server)
		c.clients[n] = cl
	}
	return cl
}

// do sends a command to n that must succeed and returns its reply as text.
func (c *Cluster) do(n *ClusterNode, args ...string) string {
	c.t.Helper()
	s, err := c.try(n, args...)
	if err != nil {
		c.t.Fatalf("%s on %s: %v", strings.Join(args, " "), n.Addr, err)
	}
	return s
}

// DoAll sends a command to every node the cluster started, each of which
// must accept it: a setting or an ACL user a test wants on every node.
func (c *Cluster) DoAll(args ...string) {
	c.t.Helper()
	for _, n := range c.Nodes() {
		c.do(n, args...)
	}
}

// try sends a command to n and returns its reply as text.
func (c *Cluster) try(n *ClusterNode, args ...string) (string, error) {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.Client(n).Do(ctx, a...).Result()
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// alive reports whether n's process runs.
func (c *Cluster) alive(n *ClusterNode) bool {
	select {
	case <-n.Exited():
		return false
	default:
		return true
	}
}

// Live returns the nodes whose process runs.
func (c *Cluster) Live() []*ClusterNode {
	var out []*ClusterNode
	for _, n := range c.Nodes() {
		if c.alive(n) {
			out = append(out, n)
		}
	}
	return out
}

// view is what one node says of one node in CLUSTER NODES.
type view struct {
	primary bool
	master  string // the primary's id for a replica
	failing bool   // fail or fail? (suspected)
	joining bool   // handshake or noaddr: not yet a member
}

// views parses n's CLUSTER NODES (its own small parser: a check on the
// code under test, not a copy of it).
func (c *Cluster) views(n *ClusterNode) (map[string]view, error) {
	text, err := c.try(n, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	out := map[string]view{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q", line)
		}
		flags := "," + f[2] + ","
		out[f[0]] = view{
			primary: strings.Contains(flags, ",master,"),
			master:  strings.TrimPrefix(f[3], "-"),
			failing: strings.Contains(flags, ",fail,") || strings.Contains(flags, ",fail?,"),
			joining: strings.Contains(flags, ",handshake,") || strings.Contains(flags, ",noaddr,"),
		}
	}
	return out, nil
}

// Roles returns the cluster's roles as the first live node sees them:
// node id -> the id of its primary, "" for a primary.
func (c *Cluster) Roles() map[string]string {
	c.t.Helper()
	for _, n := range c.Live() {
		v, err := c.views(n)
		if err != nil {
			continue
		}
		out := map[string]string{}
		for id, x := range v {
			if x.primary {
				out[id] = ""
			} else {
				out[id] = x.master
			}
		}
		return out
	}
	c.t.Fatal("no live node answers CLUSTER NODES")
	return nil
}

// Primaries returns the nodes that are primaries now, in the order of Nodes.
func (c *Cluster) Primaries() []*ClusterNode { return c.byRole(true) }

// Replicas returns the nodes that are replicas now, in the order of Nodes.
func (c *Cluster) Replicas() []*ClusterNode { return c.byRole(false) }

func (c *Cluster) byRole(primary bool) []*ClusterNode {
	roles := c.Roles()
	var out []*ClusterNode
	for _, n := range c.Nodes() {
		if m, ok := roles[n.ID]; ok && (m == "") == primary {
			out = append(out, n)
		}
	}
	return out
}

// ReplicasOf returns the replicas of primary p now.
func (c *Cluster) ReplicasOf(p *ClusterNode) []*ClusterNode {
	roles := c.Roles()
	var out []*ClusterNode
	for _, n := range c.Nodes() {
		if roles[n.ID] == p.ID {
			out = append(out, n)
		}
	}
	return out
}

// waitKnown waits until every live node knows every node of want as a
// member (no handshake pending).
func (c *Cluster) waitKnown(want []*ClusterNode) {
	c.t.Helper()
	WaitFor(c.t, c.opts.Within, "every node to know every other", func() bool {
		for _, n := range c.Live() {
			v, err := c.views(n)
			if err != nil {
				return false
			}
			for _, m := range want {
				if x, ok := v[m.ID]; !ok || x.joining {
					return false
				}
			}
		}
		return true
	})
}

// settled reports why the cluster is not settled yet, "" when it is:
// every live node says cluster_state:ok, knows every live node and sees
// the same role and primary for each, suspects none of them, and every
// live replica's link to its primary is up. What the nodes think of a
// killed node does not count: a node that joined after it died may never
// have heard of it.
func (c *Cluster) settled() string {
	live := c.Live()
	var first map[string]view
	for _, n := range live {
		info, err := c.try(n, "CLUSTER", "INFO")
		if err != nil {
			return n.Addr + ": " + err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return n.Addr + ": cluster_state not ok"
		}
		v, err := c.views(n)
		if err != nil {
			return n.Addr + ": " + err.Error()
		}
		for _, m := range live {
			x, ok := v[m.ID]
			switch {
			case !ok || x.joining:
				return n.Addr + " does not know " + m.Addr + " yet"
			case x.failing:
				return n.Addr + " suspects " + m.Addr
			}
		}
		if first == nil {
			first = v
			continue
		}
		for _, m := range live {
			if f, x := first[m.ID], v[m.ID]; f.primary != x.primary || (!x.primary && f.master != x.master) {
				return n.Addr + " disagrees on the role of " + m.Addr
			}
		}
	}
	for _, n := range live {
		x := first[n.ID]
		if x.primary {
			continue
		}
		repl, err := c.try(n, "INFO", "replication")
		if err != nil {
			return n.Addr + ": " + err.Error()
		}
		if !strings.Contains(repl, "master_link_status:up") {
			return n.Addr + ": replica link not up"
		}
	}
	return ""
}

// WaitOK waits until the cluster has settled (see StartCluster).
func (c *Cluster) WaitOK() {
	c.t.Helper()
	var why string
	if !poll(c.opts.Within, 20*time.Millisecond, func() bool { why = c.settled(); return why == "" }) {
		c.t.Fatalf("cluster did not settle within %s: %s", c.opts.Within, why)
	}
}

// WaitIdle waits until no live node runs a save or AOF rewrite (after a
// full sync, the primary's fork).
func (c *Cluster) WaitIdle() {
	c.t.Helper()
	WaitFor(c.t, c.opts.Within, "no save running on any node", func() bool {
		for _, n := range c.Live() {
			p, err := c.try(n, "INFO", "persistence")
			if err != nil || !strings.Contains(p, "rdb_bgsave_in_progress:0") ||
				!strings.Contains(p, "aof_rewrite_in_progress:0") {
				return false
			}
		}
		return true
	})
}

// Kill kills n (SIGKILL) and returns at once: the other nodes notice
// within about twice NodeTimeout. A killed primary with a replica is
// replaced by it.
func (c *Cluster) Kill(n *ClusterNode) {
	c.t.Helper()
	c.mu.Lock()
	if cl := c.clients[n]; cl != nil {
		cl.Close()
		delete(c.clients, n)
	}
	c.mu.Unlock()
	if err := n.Kill(); err != nil {
		c.t.Fatalf("kill %s: %v", n.Addr, err)
	}
}

// Restart starts a killed node again on its port and directory (same node
// id) and waits for the cluster to settle with it.
func (c *Cluster) Restart(n *ClusterNode) {
	c.t.Helper()
	if err := n.Server.Restart(context.Background()); err != nil {
		c.t.Fatalf("restart %s: %v", n.Addr, err)
	}
	c.WaitOK()
}

// AddNode starts a new node and joins it to the cluster: as a replica of
// primary when primary is not nil, else as a primary without slots. It
// returns when the cluster has settled with it.
func (c *Cluster) AddNode(primary *ClusterNode) *ClusterNode {
	c.t.Helper()
	n := c.startNode()
	c.meet(n)
	// Every node knows every other, the new one included: that the others
	// know it is not enough, and CLUSTER REPLICATE on a node that has not
	// yet heard of its primary through gossip fails with "Unknown node"
	// (TestFleetFollowsCluster, once in ten suite runs).
	c.waitKnown(c.Live())
	if primary != nil {
		c.do(n, "CLUSTER", "REPLICATE", primary.ID)
	}
	c.WaitOK()
	return n
}

// Failover sends CLUSTER FAILOVER to replica and waits until every live
// node sees it as a primary and the cluster has settled.
func (c *Cluster) Failover(replica *ClusterNode) {
	c.t.Helper()
	c.do(replica, "CLUSTER", "FAILOVER")
	WaitFor(c.t, c.opts.Within, replica.Addr+" to be a primary everywhere", func() bool {
		for _, n := range c.Live() {
			v, err := c.views(n)
			if err != nil || !v[replica.ID].primary {
				return false
			}
		}
		return true
	})
	c.WaitOK()
}

// Fill writes keys keys "fill:0" .. of size bytes each through a cluster
// client (each to the primary of its slot), so that every shard holds data,
// replicas have a replication offset and a save has keys to write. It
// returns when every replica has caught up with its primary.
func (c *Cluster) Fill(keys, size int) {
	c.t.Helper()
	var addrs []string
	for _, n := range c.Live() {
		addrs = append(addrs, n.Addr)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Protocol: 2, DisableIdentity: true})
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Within)
	defer cancel()
	val := strings.Repeat("x", size)
	_, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range keys {
			p.Set(ctx, "fill:"+strconv.Itoa(i), val, 0)
		}
		return nil
	})
	if err != nil {
		c.t.Fatalf("fill the cluster: %v", err)
	}
	WaitFor(c.t, c.opts.Within, "replicas to catch up with their primaries", func() bool {
		for _, n := range c.Live() {
			repl, err := c.try(n, "INFO", "replication")
			if err != nil {
				return false
			}
			if !strings.Contains(repl, "role:slave") {
				continue
			}
			var master *ClusterNode
			for _, m := range c.Nodes() {
				if strings.Contains(repl, "master_port:"+strconv.Itoa(m.Port)+"\r") {
					master = m
				}
			}
			if master == nil || !c.alive(master) {
				continue
			}
			mrepl, err := c.try(master, "INFO", "replication")
			if err != nil || field(mrepl, "master_repl_offset") != field(repl, "slave_repl_offset") {
				return false
			}
		}
		return true
	})
}

// field is the value of name in an INFO reply, "" when absent.
func field(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// SaveWatcher watches every node's rdb_bgsave_in_progress through clients
// of the test's own, as fast as they answer, until stopped (see
// WatchSaves).
type SaveWatcher struct {
	mu      sync.Mutex
	maxAt   int               // most nodes seen saving in one pass
	saw     map[string]bool   // nodes seen saving
	pairs   map[string]string // a pass with two saving: their addresses
	stop    chan struct{}
	stopped chan struct{}
}

// WatchSaves starts watching the nodes live now, polling each in turn,
// until Stop or the end of t.
func (c *Cluster) WatchSaves(t testing.TB) *SaveWatcher {
	w := &SaveWatcher{saw: map[string]bool{}, pairs: map[string]string{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	nodes := c.Live()
	go func() {
		defer close(w.stopped)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			var saving []string
			for _, n := range nodes {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				info, err := c.Client(n).Info(ctx, "persistence").Result()
				cancel()
				if err == nil && strings.Contains(info, "rdb_bgsave_in_progress:1") {
					saving = append(saving, n.Addr)
				}
			}
			w.mu.Lock()
			for _, a := range saving {
				w.saw[a] = true
			}
			w.maxAt = max(w.maxAt, len(saving))
			if len(saving) > 1 {
				w.pairs[saving[0]] = strings.Join(saving, " ")
			}
			w.mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return w
}

// Stop stops the watch and returns once its last pass is over. It may be
// called more than once.
func (w *SaveWatcher) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.stopped
}

// Seen reports whether the node at addr was seen saving.
func (w *SaveWatcher) Seen(addr string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saw[addr]
}

// SawAny reports whether any node was seen saving.
func (w *SaveWatcher) SawAny() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.saw) > 0
}

// MaxAtOnce is the most nodes seen saving in one pass.
func (w *SaveWatcher) MaxAtOnce() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxAt
}

// Pairs are the passes that saw more than one node saving: the first
// node's address -> every saving node's, space-separated.
func (w *SaveWatcher) Pairs() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.pairs)
}

// RDBSaves reads every live node's rdb_saves (INFO persistence), by node
// id; a node whose reply has none is left out.
func (c *Cluster) RDBSaves(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range c.Live() {
		info, err := c.Client(n).Info(context.Background(), "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		if v := field(info, "rdb_saves"); v != "" {
			out[n.ID] = v
		}
	}
	return out
}

// Package fleet watches a set of servers as one: the nodes of a cluster,
// found and followed by source/cluster, or any number of addresses. It runs
// one watch.Watcher per node, keyed by node id, starts and stops them as
// the topology changes, paces their PINGs within a budget, and hands out
// every watcher's events, and its own topology changes, through one emit
// function.
//
// Drive (drive.go) runs a rolling save headless on a fleet; the planning
// itself is source/roll's, pure logic that the UI drives with the same
// events without importing this package and its client.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/cluster"
	"github.com/vkwatch/vkwatch/source/shard"
	"github.com/vkwatch/vkwatch/source/watch"
)

// DefaultPingBudget is how many PINGs a second the whole fleet sends at
// most by default: what two servers at the 2 ms default cost today.
const DefaultPingBudget = 1000

// MinPingInterval is the shortest per-node interval the budget gives: the
// default of one server.
const MinPingInterval = 2 * time.Millisecond

// PingInterval is the per-node PING interval that keeps nodes within
// budget PINGs a second: max(2 ms, nodes / budget seconds). Two nodes get
// 2 ms, six 6 ms, a hundred 100 ms.
func PingInterval(nodes, budget int) time.Duration {
	if budget <= 0 {
		budget = DefaultPingBudget
	}
	d := time.Duration(nodes) * time.Second / time.Duration(budget)
	return max(d, MinPingInterval)
}

// DefaultSampleBudget is how many INFO samples a second the nodes at rest
// of a fleet take at most by default: up to 200 nodes each is sampled
// every --idle-interval (1 s), a larger fleet's nodes at rest less often
// (every 5 s at 1,000 nodes, 10 s at 2,000). A node in attention is
// sampled every --interval whatever the size.
const DefaultSampleBudget = 200

// SampleInterval is the INFO interval of the nodes at rest that keeps
// nodes within budget samples a second: nodes / budget seconds, no
// shorter than least.
func SampleInterval(nodes, budget int, least time.Duration) time.Duration {
	if budget <= 0 {
		budget = DefaultSampleBudget
	}
	return max(time.Duration(nodes)*time.Second/time.Duration(budget), least)
}

// rebalanceSlack is how far over budget the fleet may run before watchers
// started at a shorter interval (when there were fewer nodes) are started
// again at the new one: a node or two added to a big fleet is not worth
// restarting every watcher for.
const rebalanceSlack = 1.25

// Member is one node of a fleet and how to reach it.
type Member struct {
	ID       source.NodeID
	Endpoint source.Endpoint
}

// Config tunes a Fleet. Zero values take the defaults.
type Config struct {
	// Watch is every watcher's configuration. A PingInterval set here is
	// the user's (--ping-interval) and holds for every node; zero lets the
	// budget decide.
	Watch watch.Config
	// PingBudget is the PINGs a second of the whole fleet when Watch has no
	// PingInterval; default DefaultPingBudget.
	PingBudget int
	// SampleBudget is the INFO samples a second of the nodes at rest;
	// default DefaultSampleBudget. It lengthens IdleInterval in a fleet
	// too large for it.
	SampleBudget int
	// Share, when set, keeps only the nodes of this share of the fleet
	// (--shard I/N): the others are not watched, nor in the topology.
	Share shard.Share
	// Follow, when set, makes a list's members follow a source that
	// changes (a nodes file): Run calls it on a goroutine of its own, and
	// each call of update sets the members anew (the joins and leaves
	// show as a cluster's do), or, with an error, keeps them and puts the
	// error in the topology's Err.
	Follow func(ctx context.Context, update func([]Member, error))
	// Via and From name, for a list, what told its members (a nodes
	// file: "nodes file" and its path); see source.Topology.
	Via, From string
	// MaxObserverShare, when above 0, is the most of a node's main
	// thread its watching may take (Sample.Observer's share): a node over
	// it has its intervals at rest lengthened (see throttle).
	MaxObserverShare float64
	// IdleInterval, when longer than Watch.Interval, is how often a node
	// at rest is sampled: attention follows the save for INFO too, and a
	// node that saves, or is about to, is sampled every Watch.Interval.
	// Zero (or not longer): every node every Watch.Interval.
	IdleInterval time.Duration
	// Configure, when set, adjusts one node's watcher configuration before
	// it starts (its /proc reader, its writers' counter).
	Configure func(m Member, cfg *watch.Config)
	// Discovery tunes the rediscovery of a cluster.
	Discovery cluster.Config
	// Clock times every event; nil: a new one.
	Clock *source.Clock
}

// Fleet watches a set of nodes. Build it with NewList or NewCluster, call
// Start, then Connect (optional) and Run; Close when done.
type Fleet struct {
	cfg   Config
	clock *source.Clock
	disc  *cluster.Discoverer // nil for a list
	list  []Member            // the list's members at first, nil for a cluster

	// eps are a list's endpoints by node, every one it had: the members
	// are the topology's nodes (guarded by mu).
	eps map[source.NodeID]source.Endpoint

	mu       sync.Mutex
	topo     source.Topology // with PingInterval
	members  map[source.NodeID]Member
	watchers map[source.NodeID]*running
	runCtx   context.Context // set while Run runs
	emit     func(source.Event)
	closed   bool

	att attention // guarded by mu
	// slow is how many times its intervals at rest each throttled node's
	// are (see throttle); guarded by mu.
	slow map[source.NodeID]slowNode
	// restIvl is the INFO interval of the nodes at rest (ns), set with
	// the members under mu (the sample budget lengthens it with the
	// fleet's size); read without it.
	restIvl atomic.Int64

	// omu guards what observe learns from the events.
	omu   sync.Mutex
	roles map[source.NodeID]string // latest INFO role of each node
}

// running is one node's watcher.
type running struct {
	w        *watch.Watcher
	member   Member
	interval time.Duration      // PING (its INFO interval: w.Interval)
	cancel   context.CancelFunc // nil until it runs
	done     chan struct{}
}

// NewList returns a fleet of the given servers, each a shard of its own.
func NewList(members []Member, cfg Config) *Fleet {
	f := newFleet(cfg)
	f.list = f.keep(members)
	for _, m := range f.list {
		f.eps[m.ID] = m.Endpoint
	}
	return f
}

// keep is the members of the fleet's share.
func (f *Fleet) keep(members []Member) []Member {
	var out []Member
	for _, m := range members {
		if f.cfg.Share.Holds(m.Endpoint.String()) {
			out = append(out, m)
		}
	}
	return out
}

// NewCluster returns a fleet of the cluster that seed is a node of; every
// node is reached with seed's credentials and TLS settings.
func NewCluster(seed source.Endpoint, cfg Config) *Fleet {
	f := newFleet(cfg)
	if cfg.Discovery.Timeout <= 0 {
		cfg.Discovery.Timeout = f.cfg.Watch.ConnectTimeout
	}
	f.disc = cluster.New(seed, cfg.Discovery)
	return f
}

func newFleet(cfg Config) *Fleet {
	if cfg.PingBudget <= 0 {
		cfg.PingBudget = DefaultPingBudget
	}
	if cfg.SampleBudget <= 0 {
		cfg.SampleBudget = DefaultSampleBudget
	}
	if cfg.Watch.ConnectTimeout <= 0 {
		cfg.Watch.ConnectTimeout = 3 * time.Second
	}
	if cfg.Watch.Interval <= 0 {
		cfg.Watch.Interval = watch.DefaultInterval
	}
	if cfg.IdleInterval <= cfg.Watch.Interval {
		cfg.IdleInterval = 0
	}
	if cfg.Clock == nil {
		cfg.Clock = source.NewClock()
	}
	f := &Fleet{
		cfg: cfg, clock: cfg.Clock,
		members:  map[source.NodeID]Member{},
		watchers: map[source.NodeID]*running{},
		roles:    map[source.NodeID]string{},
		eps:      map[source.NodeID]source.Endpoint{},
		att:      newAttention(),
		slow:     map[source.NodeID]slowNode{},
	}
	f.restIvl.Store(int64(f.restSamplingFor(0)))
	return f
}

// Start learns the fleet's topology (a cluster's through discovery, within
// the connect timeout) and prepares a watcher for every node, dialling
// nothing else. It returns the topology.
func (f *Fleet) Start(ctx context.Context) (source.Topology, error) {
	var top source.Topology
	if f.disc != nil {
		dctx, cancel := context.WithTimeout(ctx, f.cfg.Watch.ConnectTimeout)
		t, err := f.disc.Discover(dctx)
		cancel()
		if err != nil {
			return top, err
		}
		top = f.keepTopology(t)
	} else {
		top = listTopology(ctx, f.list, source.Topology{})
		top.Via, top.From = f.cfg.Via, f.cfg.From
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setTopologyLocked(top)
	for _, m := range f.membersOf(top) {
		f.members[m.ID] = m
		f.watchers[m.ID] = f.newRunning(m, f.intervalOfLocked(m.ID))
	}
	return f.topo, nil
}

// listTopology is a list's topology: one shard per server, each on the
// host its address names (resolved, so that two names of one machine are
// one host for the rolling save). A node of old keeps what it had there
// (its host, the role INFO gave it).
func listTopology(ctx context.Context, members []Member, old source.Topology) source.Topology {
	known := map[source.NodeID]source.TopologyNode{}
	for _, n := range old.Nodes() {
		known[n.ID] = n
	}
	top := source.Topology{Shards: make([]source.Shard, len(members))}
	var wg sync.WaitGroup
	for i, m := range members {
		if n, ok := known[m.ID]; ok {
			top.Shards[i] = source.Shard{Nodes: []source.TopologyNode{n}}
			continue
		}
		wg.Go(func() {
			n := source.TopologyNode{ID: m.ID, Addr: m.Endpoint.Addr, IP: hostOf(ctx, m.Endpoint)}
			top.Shards[i] = source.Shard{Nodes: []source.TopologyNode{n}}
		})
	}
	wg.Wait()
	return top
}

// keepTopology is a cluster's topology with only the nodes of the fleet's
// share, and the changes of those.
func (f *Fleet) keepTopology(top source.Topology) source.Topology {
	if f.cfg.Share.All() {
		return top
	}
	top.Share = f.cfg.Share.String()
	var shards []source.Shard
	for _, sh := range top.Shards {
		var nodes []source.TopologyNode
		for _, n := range sh.Nodes {
			if f.cfg.Share.Holds(n.Addr) {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) > 0 {
			sh.Nodes = nodes
			shards = append(shards, sh)
		}
	}
	top.Shards = shards
	var changes []source.TopologyChange
	for _, c := range top.Changes {
		if f.cfg.Share.Holds(c.Addr) {
			changes = append(changes, c)
		}
	}
	top.Changes = changes
	return top
}

// hostOf is the IP address an endpoint's host resolves to ("local" for a
// unix socket); the name itself when it does not resolve within a second.
func hostOf(ctx context.Context, ep source.Endpoint) string {
	if ep.Network == "unix" {
		return "local"
	}
	h, _, err := net.SplitHostPort(ep.Addr)
	if err != nil {
		return ep.Addr
	}
	if net.ParseIP(h) != nil {
		return h
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if ips, err := net.DefaultResolver.LookupHost(ctx, h); err == nil && len(ips) > 0 {
		return ips[0]
	}
	return h
}

// membersOf are the nodes of top that can be watched (those with an
// address), with f.mu held.
func (f *Fleet) membersOf(top source.Topology) []Member {
	var out []Member
	for _, n := range top.Nodes() {
		switch {
		case f.disc == nil:
			out = append(out, Member{ID: n.ID, Endpoint: f.eps[n.ID]})
		case n.Addr != "":
			out = append(out, Member{ID: n.ID, Endpoint: cluster.NodeEndpoint(f.seed(), n)})
		}
	}
	return out
}

func (f *Fleet) seed() source.Endpoint { return f.disc.Seed() }

// setTopologyLocked keeps top, with the PING interval for its size and
// the nodes in attention.
func (f *Fleet) setTopologyLocked(top source.Topology) {
	n := len(f.membersOf(top))
	top.PingInterval = f.intervalFor(n)
	top.Attention = f.topo.Attention
	f.restIvl.Store(int64(f.restSamplingFor(n)))
	top.SampleInterval, top.AttentionSampleInterval = f.restSampling(), f.cfg.Watch.Interval
	top.SampleBudget = f.cfg.SampleBudget
	if !f.fixedInterval() {
		top.PingBudget = f.cfg.PingBudget
	}
	top.Share = f.cfg.Share.String()
	f.topo = top
	if f.attentive() && len(f.watchers) > 0 {
		f.retimeLocked()
	}
}

// intervalFor is the per-node PING interval for n nodes.
func (f *Fleet) intervalFor(n int) time.Duration {
	if f.cfg.Watch.PingInterval > 0 {
		return f.cfg.Watch.PingInterval
	}
	return PingInterval(n, f.cfg.PingBudget)
}

// newRunning prepares the watcher of m, with f.mu held.
func (f *Fleet) newRunning(m Member, interval time.Duration) *running {
	cfg := f.cfg.Watch
	cfg.PingInterval = interval
	if f.cfg.Configure != nil {
		f.cfg.Configure(m, &cfg)
	}
	r := &running{
		w:      watch.New(m.ID, m.Endpoint, f.clock, cfg),
		member: m, interval: interval, done: make(chan struct{}),
	}
	// Made for the finer interval (its probe's ring is sized by it),
	// sampled from the start at the one its attention calls for.
	r.w.SetInterval(f.samplingOfLocked(m.ID))
	return r
}

// Connected is what Connect learned of one node.
type Connected struct {
	Member   Member
	Identity *source.Identity // nil when Err is set
	Err      error
}

// Connect makes one attempt, within the connect timeout and for every node
// at once, to reach each node, and returns the results in topology order.
func (f *Fleet) Connect(ctx context.Context) []Connected {
	f.mu.Lock()
	members := f.membersOf(f.topo)
	ws := make([]*running, len(members))
	for i, m := range members {
		ws[i] = f.watchers[m.ID]
	}
	f.mu.Unlock()
	out := make([]Connected, len(members))
	var (
		wg    sync.WaitGroup
		rmu   sync.Mutex
		roles = map[source.NodeID]string{}
	)
	for i, r := range ws {
		out[i].Member = members[i]
		if r == nil {
			out[i].Err = errors.New("not watched")
			continue
		}
		wg.Go(func() {
			id, err := r.w.Connect(ctx)
			if err != nil {
				out[i].Err = err
				return
			}
			out[i].Identity = &id
			if role := source.RoleOf(id.Role); f.noteRole(r.member.ID, role) && f.disc == nil {
				rmu.Lock()
				roles[r.member.ID] = role
				rmu.Unlock()
			}
		})
	}
	wg.Wait()
	// One topology for every role learnt: one a node was a copy of the
	// whole topology each, 21 MB and a second of the UI's time at 1,000.
	f.listRoles(roles)
	return out
}

// Topology returns the fleet's topology as it stands, with the PING
// intervals in force.
func (f *Fleet) Topology() source.Topology {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.topo
}

// PingInterval returns the per-node PING interval in force.
func (f *Fleet) PingInterval() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.topo.PingInterval
}

// Run runs every node's watcher, and for a cluster the rediscovery, until
// ctx ends; then it stops them all and returns. emit receives every event:
// first an EventTopology with the fleet as it stands, then each watcher's
// events (in order per node; emit is called from several goroutines at
// once, one per node, so it must be safe for that) and an EventTopology
// after every change. Nodes that join start a watcher, nodes that leave
// stop theirs.
func (f *Fleet) Run(ctx context.Context, emit func(source.Event)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.mu.Lock()
	if f.closed || f.runCtx != nil {
		f.mu.Unlock()
		return
	}
	f.runCtx, f.emit = ctx, emit
	top := f.topo
	f.mu.Unlock()
	f.emitTopology(top)

	f.mu.Lock()
	for _, r := range f.watchers {
		f.startLocked(r)
	}
	f.mu.Unlock()

	var wg sync.WaitGroup
	switch {
	case f.disc != nil:
		wg.Go(func() { f.disc.Run(ctx, func(top source.Topology) { f.apply(f.keepTopology(top)) }) })
	case f.cfg.Follow != nil:
		wg.Go(func() { f.cfg.Follow(ctx, func(ms []Member, err error) { f.updateList(ctx, ms, err) }) })
	}
	<-ctx.Done()
	wg.Wait()
	f.mu.Lock()
	rs := f.takeAllLocked()
	f.runCtx = nil
	f.mu.Unlock()
	for _, r := range rs {
		r.stop()
	}
}

// startLocked starts r's watcher.
func (f *Fleet) startLocked(r *running) {
	ctx, cancel := context.WithCancel(f.runCtx)
	r.cancel = cancel
	go func() {
		defer close(r.done)
		r.w.Run(ctx, f.observe)
	}()
}

// stop ends a watcher's Run, waits for it and closes the watcher. Never
// call it holding f.mu: the watcher's last emit may be waiting for it.
func (r *running) stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
	}
	r.w.Close()
}

func (f *Fleet) takeAllLocked() []*running {
	rs := make([]*running, 0, len(f.watchers))
	for id, r := range f.watchers {
		rs = append(rs, r)
		delete(f.watchers, id)
	}
	return rs
}

// observe passes a watcher's event on, noticing a role change first: the
// cluster is asked at once, not at the next rediscovery; a list's topology
// takes the role from INFO.
func (f *Fleet) observe(ev source.Event) {
	var role string
	switch {
	case ev.Kind == source.EventSample && ev.Sample != nil:
		role = source.RoleOf(ev.Sample.Info.Role)
	case ev.Kind == source.EventConnected && ev.Identity != nil:
		role = source.RoleOf(ev.Identity.Role)
	}
	changed := role != "" && f.noteRole(ev.Node, role)
	f.mu.Lock()
	emit := f.emit
	f.mu.Unlock()
	emit(ev)
	// After the event: the topology that says a node is now probed
	// finely comes after the sample that showed its save.
	f.attend(ev)
	f.throttle(ev)
	if changed {
		if f.disc != nil {
			f.disc.Poke()
		} else {
			f.listRoles(map[source.NodeID]string{ev.Node: role})
		}
	}
}

// noteRole keeps node's latest role and reports whether it is news: it
// differs from the one before, or, the first time, from the topology's.
func (f *Fleet) noteRole(node source.NodeID, role string) bool {
	f.omu.Lock()
	prev, ok := f.roles[node]
	f.roles[node] = role
	f.omu.Unlock()
	if ok {
		return prev != role
	}
	f.mu.Lock()
	n, known := f.topo.Node(node)
	f.mu.Unlock()
	return known && n.Role != role
}

// listRoles puts list nodes' roles, as INFO says them, into the topology.
func (f *Fleet) listRoles(roles map[source.NodeID]string) {
	if len(roles) == 0 {
		return
	}
	f.mu.Lock()
	top := f.topo
	top.Shards = append([]source.Shard(nil), top.Shards...)
	found := false
	for i := range top.Shards {
		nodes := append([]source.TopologyNode(nil), top.Shards[i].Nodes...)
		for j := range nodes {
			if role, ok := roles[nodes[j].ID]; ok && nodes[j].Role != role {
				nodes[j].Role = role
				found = true
			}
		}
		top.Shards[i].Nodes = nodes
	}
	if !found {
		f.mu.Unlock()
		return
	}
	top.Changes = cluster.Diff(f.topo, top)
	f.topo = top
	running := f.runCtx != nil
	f.mu.Unlock()
	if running {
		f.emitTopology(top)
	}
}

// apply follows a new topology of the cluster: watchers for nodes that
// joined (or moved), none for nodes that left, the PING interval for the
// new size, and an EventTopology.
func (f *Fleet) apply(top source.Topology) {
	f.mu.Lock()
	if f.runCtx == nil || f.runCtx.Err() != nil {
		f.mu.Unlock()
		return
	}
	f.setTopologyLocked(top)
	want := map[source.NodeID]Member{}
	for _, m := range f.membersOf(top) {
		want[m.ID] = m
	}
	var stop []*running
	for id, r := range f.watchers {
		if m, ok := want[id]; !ok || m.Endpoint != r.member.Endpoint {
			stop = append(stop, r)
			delete(f.watchers, id)
			delete(f.members, id)
		}
	}
	stop = append(stop, f.overBudgetLocked()...)
	f.mu.Unlock()
	for _, r := range stop {
		r.stop()
	}

	f.mu.Lock()
	if f.runCtx == nil || f.runCtx.Err() != nil {
		f.mu.Unlock()
		return
	}
	for id, m := range want {
		if f.watchers[id] == nil {
			r := f.newRunning(m, f.intervalOfLocked(id))
			f.watchers[id] = r
			f.members[id] = m
			f.startLocked(r)
		}
	}
	f.retimeLocked()
	out := f.topo
	f.mu.Unlock()
	f.emitTopology(out)
}

// updateList sets a list's members anew (or, with err, says in the
// topology why they could not be: the members stay).
func (f *Fleet) updateList(ctx context.Context, members []Member, err error) {
	f.mu.Lock()
	old := f.topo
	if f.runCtx == nil || f.runCtx.Err() != nil {
		f.mu.Unlock()
		return
	}
	if err != nil {
		top := old
		top.Changes = nil
		top.Err = fmt.Sprintf("%v; keeping the fleet as it was (%d nodes)", err, len(old.Nodes()))
		f.topo = top
		f.mu.Unlock()
		f.emitTopology(top)
		return
	}
	f.mu.Unlock()
	members = f.keep(members)
	top := listTopology(ctx, members, old)
	top.Via, top.From = old.Via, old.From
	top.Changes = cluster.Diff(old, top)
	f.mu.Lock()
	for _, m := range members {
		f.eps[m.ID] = m.Endpoint
	}
	f.mu.Unlock()
	f.apply(top)
}

// overBudgetLocked takes out, to be started again at the interval now in
// force, the watchers started at a shorter one, when together they PING
// more than rebalanceSlack times the budget. (Only with the budget in
// force; a --ping-interval holds as given.)
func (f *Fleet) overBudgetLocked() []*running {
	if f.cfg.Watch.PingInterval > 0 {
		return nil
	}
	var rate float64
	for _, r := range f.watchers {
		rate += float64(time.Second) / float64(r.interval)
	}
	if rate <= rebalanceSlack*float64(f.cfg.PingBudget) {
		return nil
	}
	var out []*running
	for id, r := range f.watchers {
		if r.interval < f.topo.PingInterval && f.att.reason(id) == "" {
			out = append(out, r)
			delete(f.watchers, id)
		}
	}
	return out
}

// emitTopology sends top as an EventTopology.
func (f *Fleet) emitTopology(top source.Topology) {
	f.mu.Lock()
	emit := f.emit
	f.mu.Unlock()
	if emit == nil {
		return
	}
	off, at := f.clock.Now()
	t := top
	emit(source.Event{Kind: source.EventTopology, Offset: off, At: at, Topology: &t})
}

// Do sends a command to one node (see watch.Watcher.Do); its answer is
// also emitted as that node's EventCommand.
func (f *Fleet) Do(ctx context.Context, node source.NodeID, args ...string) source.CommandResult {
	f.mu.Lock()
	r := f.watchers[node]
	f.mu.Unlock()
	if r == nil {
		return f.notWatched(node, args)
	}
	// A save about to start is probed finely from before it forks, so
	// that the fork's pause falls between PINGs 2 ms apart.
	f.sending(node, args)
	return r.w.Do(ctx, args...)
}

// notWatched is Do's answer for a node the fleet does not watch (it left
// while the command was on its way, as a rolling save's next node can): a
// refusal, emitted as that node's EventCommand too, so that whoever follows
// the events (the fleet view's roll) sees the command end and is not left
// waiting on it.
func (f *Fleet) notWatched(node source.NodeID, args []string) source.CommandResult {
	off, at := f.clock.Now()
	res := source.CommandResult{Command: strings.Join(args, " "), Sent: off, Done: off,
		Err: fmt.Sprintf("%s is not watched (it left the fleet)", node)}
	f.mu.Lock()
	emit := f.emit
	f.mu.Unlock()
	if emit != nil {
		c := res
		emit(source.Event{Node: node, Kind: source.EventCommand, Offset: off, At: at, Command: &c})
	}
	return res
}

// Member returns the member with id, and whether it is watched now.
func (f *Fleet) Member(id source.NodeID) (Member, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.members[id]
	return m, ok
}

// Close closes every watcher and the discovery's connection. Run, if it
// runs, must have returned or be about to (its context ended).
func (f *Fleet) Close() error {
	f.mu.Lock()
	f.closed = true
	rs := f.takeAllLocked()
	f.mu.Unlock()
	for _, r := range rs {
		r.stop()
	}
	if f.disc != nil {
		return f.disc.Close()
	}
	return nil
}

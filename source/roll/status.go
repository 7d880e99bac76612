package roll

import (
	"net"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/store"
)

// NodeStatus is what is known of one node now: a fleet view's row, before
// any history. Its place in the fleet is the Status's own; the rest is
// read from the history store (source/store), the one copy of each
// node's latest state.
type NodeStatus struct {
	Node  source.TopologyNode
	Shard int    // index of its shard in the topology
	Host  string // source.HostKey of its IP: nodes with one Host share a machine

	Identity  *source.Identity // from the latest EventConnected, nil before
	Connected bool             // connected and answering
	// Err is why it is not (the latest EventDisconnected); Stalled says
	// the server is connected but silent (source.Event.Stalled).
	Err     string
	Stalled bool

	Sample *source.Sample     // the latest sample, nil before the first
	Report *source.SaveReport // the latest save report, nil before the first
	// Forecast is the node's next fork save (source/forecast), from its
	// samples and saves as the store saw them; absent before a sample.
	Forecast source.Opt[forecast.Forecast]
}

// Busy reports whether the node runs a fork child or loads a dataset, as
// its latest sample says: a save (whoever started it, a replica's full
// sync included), an AOF rewrite, or loading.
func (n NodeStatus) Busy() bool {
	s := n.Sample
	if s == nil {
		return false
	}
	in := &s.Info
	return s.Save != nil || in.RDBInProgress.V == 1 || in.AOFRewriteInProgress.V == 1 || in.Loading.V == 1
}

// member is a node's place in the topology: all Status keeps of it.
type member struct {
	node  source.TopologyNode
	shard int
	host  string
}

// Status is a fleet's topology over the latest state of each node, which
// it reads from a history store. It is pure and deterministic: the UI
// holds one over its own store and feeds it every event from Update after
// the store (replay feeds it the recorded ones); headless, NewStatus
// keeps a store of its own. Not safe for concurrent use.
type Status struct {
	top   source.Topology
	nodes map[source.NodeID]*member
	order []source.NodeID // topology order
	now   time.Duration   // the latest event's offset
	hist  *store.Store
	// feed says the store is the Status's own: Observe adds the members'
	// events to it. Otherwise the store's owner adds them first.
	feed bool
}

// NewStatus returns a Status that knows top (it learns later topologies
// from EventTopology), with a store of its own that Observe feeds.
func NewStatus(top source.Topology) *Status {
	s := NewStatusOf(top, store.New(store.Config{}))
	s.feed = true
	return s
}

// NewStatusOf returns a Status that knows top and reads each node's state
// from hist, which its owner feeds every event before Observe.
func NewStatusOf(top source.Topology, hist *store.Store) *Status {
	s := &Status{nodes: map[source.NodeID]*member{}, hist: hist}
	s.setTopology(top)
	return s
}

func (s *Status) setTopology(top source.Topology) {
	s.top = top
	s.order = s.order[:0]
	seen := map[source.NodeID]bool{}
	for i, sh := range top.Shards {
		for _, n := range sh.Nodes {
			m := s.nodes[n.ID]
			if m == nil {
				m = &member{}
				s.nodes[n.ID] = m
			}
			m.node, m.shard, m.host = n, i, source.HostKey(n.IP)
			if m.host == "" {
				m.host = source.HostKey(hostOfAddr(n.Addr))
			}
			s.order = append(s.order, n.ID)
			seen[n.ID] = true
		}
	}
	for id := range s.nodes {
		if !seen[id] {
			delete(s.nodes, id)
		}
	}
}

// Observe folds one event in.
func (s *Status) Observe(ev source.Event) {
	if ev.Offset > s.now {
		s.now = ev.Offset
	}
	if ev.Kind == source.EventTopology {
		if ev.Topology != nil {
			s.setTopology(*ev.Topology)
		}
		return
	}
	if s.feed && s.nodes[ev.Node] != nil && ev.Kind != source.EventCommand {
		s.hist.Add(ev)
	}
}

// Now returns the offset of the latest event observed: the status's now.
func (s *Status) Now() time.Duration { return s.now }

// Topology returns the topology the status knows.
func (s *Status) Topology() source.Topology { return s.top }

// Node returns the status of one node, and whether it is a member.
func (s *Status) Node(id source.NodeID) (NodeStatus, bool) {
	m := s.nodes[id]
	if m == nil {
		return NodeStatus{}, false
	}
	return s.status(id, m), true
}

// Nodes returns every node's status in topology order: shard by shard,
// each primary before its replicas.
func (s *Status) Nodes() []NodeStatus {
	out := make([]NodeStatus, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.status(id, s.nodes[id]))
	}
	return out
}

// status is a member's place with its state as the store has it now
// (live: a frozen view does not hold the roll back).
func (s *Status) status(id source.NodeID, m *member) NodeStatus {
	v := s.hist.Live(id)
	down := v.State == store.Disconnected
	return NodeStatus{
		Node: m.node, Shard: m.shard, Host: m.host,
		Identity: v.Identity, Connected: v.State == store.Connected,
		Err: v.Reason, Stalled: down && v.Stalled,
		Sample: v.Latest, Report: v.Report, Forecast: v.Forecast,
	}
}

// hostOfAddr is the host part of host:port.
func hostOfAddr(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

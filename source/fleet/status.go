package fleet

import (
	"net"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
)

// NodeStatus is what is known of one node now: a fleet view's row, before
// any history.
type NodeStatus struct {
	Node  source.TopologyNode
	Shard int    // index of its shard in the topology
	Host  string // source.HostKey of its IP: nodes with one Host share a machine

	Identity  *source.Identity // from the latest EventConnected, nil before
	Connected bool             // connected and answering
	// Err is why it is not (the latest EventDisconnected); Stalled says
	// the server is connected but silent (source.Stalled).
	Err     string
	Stalled bool

	Sample *source.Sample     // the latest sample, nil before the first
	Report *source.SaveReport // the latest save report, nil before the first
	// Forecast is the node's next fork save (source/forecast), from its
	// samples and saves as Status saw them; absent before a sample.
	Forecast source.Opt[forecast.Forecast]
	fc       *forecast.Node
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

// Status folds a fleet's events into the latest state of each node. It is
// pure and deterministic: the UI holds one and feeds it every event from
// Update (replay feeds it the recorded ones). Not safe for concurrent use.
type Status struct {
	top   source.Topology
	nodes map[source.NodeID]*NodeStatus
	order []source.NodeID // topology order
	now   time.Duration   // the latest event's offset
}

// NewStatus returns a Status that knows top (it learns later topologies
// from EventTopology).
func NewStatus(top source.Topology) *Status {
	s := &Status{nodes: map[source.NodeID]*NodeStatus{}}
	s.setTopology(top)
	return s
}

func (s *Status) setTopology(top source.Topology) {
	s.top = top
	s.order = s.order[:0]
	seen := map[source.NodeID]bool{}
	for i, sh := range top.Shards {
		for _, n := range sh.Nodes {
			st := s.node(n.ID)
			st.Node, st.Shard, st.Host = n, i, source.HostKey(n.IP)
			if st.Host == "" {
				st.Host = source.HostKey(hostOfAddr(n.Addr))
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

// node returns the status of id, making one when there is none.
func (s *Status) node(id source.NodeID) *NodeStatus {
	st := s.nodes[id]
	if st == nil {
		st = &NodeStatus{Node: source.TopologyNode{ID: id}, Shard: -1}
		s.nodes[id] = st
	}
	return st
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
	st := s.nodes[ev.Node]
	if st == nil {
		return // not a member (any more)
	}
	switch ev.Kind {
	case source.EventConnected:
		st.Identity, st.Connected, st.Err, st.Stalled = ev.Identity, true, "", false
	case source.EventDisconnected:
		st.Connected, st.Err, st.Stalled = false, ev.Err, source.Stalled(ev.Err)
	case source.EventSample, source.EventSaveStarted:
		if ev.Sample != nil {
			if st.Sample != ev.Sample { // a save's first sample comes twice
				st.observe(ev.Sample)
			}
			st.Sample = ev.Sample
			st.Connected, st.Err, st.Stalled = true, "", false
		}
	case source.EventSaveEnded:
		if ev.Report != nil {
			st.Report = ev.Report
			st.learn(ev.Report)
		}
	}
}

// observe and learn feed the node's forecast.
func (n *NodeStatus) observe(s *source.Sample) {
	if n.fc == nil {
		n.fc = &forecast.Node{}
	}
	n.fc.Observe(s)
	f, ok := n.fc.Forecast()
	n.Forecast = source.Opt[forecast.Forecast]{V: f, OK: ok}
}

func (n *NodeStatus) learn(r *source.SaveReport) {
	if n.fc == nil {
		n.fc = &forecast.Node{}
	}
	n.fc.Learn(r)
	f, ok := n.fc.Forecast()
	n.Forecast = source.Opt[forecast.Forecast]{V: f, OK: ok}
}

// Now returns the offset of the latest event observed: the status's now.
func (s *Status) Now() time.Duration { return s.now }

// Topology returns the topology the status knows.
func (s *Status) Topology() source.Topology { return s.top }

// Node returns the status of one node, and whether it is a member.
func (s *Status) Node(id source.NodeID) (NodeStatus, bool) {
	st := s.nodes[id]
	if st == nil {
		return NodeStatus{}, false
	}
	return *st, true
}

// Nodes returns every node's status in topology order: shard by shard,
// each primary before its replicas.
func (s *Status) Nodes() []NodeStatus {
	out := make([]NodeStatus, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, *s.nodes[id])
	}
	return out
}

// hostOfAddr is the host part of host:port.
func hostOfAddr(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

package ui

import (
	"fmt"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// A fake fleet for the fleet view's tests: a cluster of three shards, a
// primary and a replica each, whose nodes make the fake server's smooth
// curves at their own size and load, so that the rows differ and sort.

// fleetNode is one fake cluster node.
type fleetNode struct {
	fakeServer
	id    source.NodeID
	addr  string
	scale float64 // memory and load against the fake server's
}

// fleetAddr is the address of fake node i (1-based).
func fleetAddr(i int) string { return fmt.Sprintf("127.0.0.1:%d", 30000+i) }

// fleetID is the cluster node id of fake node i.
func fleetID(i int) source.NodeID { return source.NodeID(fmt.Sprintf("%040x", 0xa0+i)) }

// fleetTopo is the fake cluster: shard s (1..3) has primary node s and
// replica node s+3, as redis-cli --cluster create lays six nodes out.
func fleetTopo() source.Topology {
	top := source.Topology{Cluster: true, Via: "CLUSTER SHARDS", From: fleetAddr(1), PingInterval: 6 * time.Millisecond}
	slots := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for s := 1; s <= 3; s++ {
		p, r := s, s+3
		top.Shards = append(top.Shards, source.Shard{
			Slots: []source.SlotRange{{Start: slots[s-1][0], End: slots[s-1][1]}},
			Nodes: []source.TopologyNode{
				{ID: fleetID(p), Addr: fleetAddr(p), IP: "127.0.0.1", Role: source.RolePrimary, Health: source.HealthOnline},
				{ID: fleetID(r), Addr: fleetAddr(r), IP: "127.0.0.1", Role: source.RoleReplica, Health: source.HealthOnline, Primary: fleetID(p)},
			}})
	}
	return top
}

func newFleetNode(i int) *fleetNode {
	return &fleetNode{fakeServer: fakeServer{idx: 1}, id: fleetID(i), addr: fleetAddr(i), scale: 0.5 + float64(i)/4}
}

func (n *fleetNode) connected(off time.Duration, role string) source.Event {
	return source.Event{Node: n.id, Kind: source.EventConnected, Offset: off, At: epoch.Add(off),
		Identity: &source.Identity{Addr: n.addr, ServerName: "redis", Version: "7.0.15", Role: role, Local: true, Cluster: true}}
}

func (n *fleetNode) sampleEvent(off time.Duration, role string) source.Event {
	s := n.sample(off)
	s.Info.Role = role
	k := n.scale
	sc := func(o *source.Opt[int64]) {
		if o.OK {
			o.V = int64(float64(o.V) * k)
		}
	}
	sc(&s.Info.UsedMemory)
	sc(&s.Info.RSS)
	sc(&s.Proc.RSS)
	sc(&s.Footprint)
	if s.OpsPerSec.OK {
		s.OpsPerSec.V *= k
	}
	s.Ping10s.P99 = time.Duration(float64(s.Ping10s.P99) * k)
	return source.Event{Node: n.id, Kind: source.EventSample, Offset: off, At: s.At, Sample: s}
}

// sampleEventFor is a sample of another node id (one that joined later).
func (n *fleetNode) sampleEventFor(id source.NodeID, off time.Duration) source.Event {
	ev := n.sampleEvent(off, "slave")
	ev.Node = id
	return ev
}

func (n *fleetNode) endSaveEvent(off time.Duration) source.Event {
	ev := n.endSave(off)
	ev.Node, ev.Report.Node, ev.Report.Addr = n.id, n.id, n.addr
	return ev
}

// fleetScenario is the fake cluster from 0 to until: node 5 (a replica)
// saved from 10 s to 25 s; node 4 (a replica) runs a fork save from 52 s;
// node 6 went down at 45 s.
func fleetScenario(until time.Duration) []source.Event {
	top := fleetTopo()
	evs := []source.Event{{Kind: source.EventTopology, Topology: &top}}
	var per [][]source.Event
	for i := 1; i <= 6; i++ {
		n := newFleetNode(i)
		role := map[bool]string{true: "master", false: "slave"}[i <= 3]
		var s []source.Event
		s = append(s, n.connected(0, role))
		for off := time.Duration(0); off < until; off += tick {
			switch {
			case i == 5 && off == 10*time.Second, i == 4 && off == 52*time.Second:
				n.startSave(off, source.SaveFork)
				n.save.Trigger = source.Trigger{Kind: source.TriggerUser}
			case i == 5 && off == 25*time.Second:
				s = append(s, n.endSaveEvent(off))
			case i == 6 && off == 45*time.Second:
				s = append(s, source.Event{Node: n.id, Kind: source.EventDisconnected, Offset: off, At: epoch.Add(off),
					Err: "dial tcp 127.0.0.1:30006: connect: connection refused"})
			}
			if i == 6 && off >= 45*time.Second {
				continue
			}
			ev := n.sampleEvent(off, role)
			s = append(s, ev)
			if sv := ev.Sample.Save; sv != nil && sv.Started == off {
				s = append(s, source.Event{Node: n.id, Kind: source.EventSaveStarted, Offset: off, At: ev.At, Sample: ev.Sample})
			}
		}
		per = append(per, s)
	}
	merged := per[0]
	for _, s := range per[1:] {
		merged = interleave(merged, s)
	}
	return append(evs, merged...)
}

// fleetNodes are the fake cluster's nodes, as the monitor lists them.
func fleetNodes() []Node {
	var out []Node
	for i := 1; i <= 6; i++ {
		out = append(out, Node{ID: fleetID(i), Addr: fleetAddr(i)})
	}
	return out
}

// newFleetModel is a fleet model of the fake cluster at w x h.
func newFleetModel(w, h int, send func(source.NodeID, ...string)) Model {
	top := fleetTopo()
	return sized(New(Config{Nodes: fleetNodes(), Topology: &top, Now: fixedNow, Send: send}), w, h)
}

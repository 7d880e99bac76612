package replay

import (
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/ui"
)

// OfFile is a replay of the window win of the recording rf through a
// monitor configured by cfg, given the servers and the fleet the
// recording starts with (read from its first 10 s: later nodes come in
// topology events as it plays), the sampling intervals it used (one
// before --idle-interval came) and the history its session kept: what a
// seek reads before its target.
func OfFile(cfg ui.Config, rf *record.File, win record.Window, opts Options) (Model, error) {
	h, err := head(rf)
	if err != nil {
		return Model{}, err
	}
	cfg.Nodes, cfg.Topology = nodesOf(h), topologyOf(h)
	setting := func(name string) time.Duration {
		if d, err := time.ParseDuration(rf.Header.Settings[name]); err == nil && d > 0 {
			return d
		}
		return 0 // the monitor's default
	}
	cfg.History, cfg.Interval, cfg.IdleInterval = setting("history"), setting("interval"), setting("idle_interval")
	return New(cfg, &record.WindowSource{F: rf, Win: win}, opts), nil
}

// head is the start of a recording: its first 10 s, which name the
// servers and the fleet a replay opens on (later nodes come in topology
// events as it plays).
func head(rf *record.File) (*record.Recording, error) {
	sc, err := rf.ScanFrom(rf.Start)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	h := &record.Recording{Header: rf.Header}
	for ev, err := range sc.Events() {
		if err != nil {
			return h, err
		}
		if len(h.Events) == 10000 || ev.Offset > rf.Start+10*time.Second {
			break
		}
		h.Events = append(h.Events, ev)
	}
	return h, nil
}

// nodesOf are the servers of a recording: those of its header, in
// order, then any that only its events name (a node that joined later, in
// a topology event or its own).
func nodesOf(rec *record.Recording) []ui.Node {
	var nodes []ui.Node
	seen := map[source.NodeID]bool{}
	for _, s := range rec.Header.Servers {
		id := s.Node
		if id == "" {
			// A bench recording named its servers without their node id
			// until now: their events carry the address as the id.
			id = source.NodeID(s.Addr)
		}
		if !seen[id] {
			seen[id] = true
			nodes = append(nodes, ui.Node{ID: id, Addr: s.Addr})
		}
	}
	add := func(id source.NodeID, addr string) {
		if id != "" && !seen[id] {
			seen[id] = true
			if addr == "" {
				addr = string(id)
			}
			nodes = append(nodes, ui.Node{ID: id, Addr: addr})
		}
	}
	for _, ev := range rec.Events {
		switch {
		case ev.Topology != nil:
			// A fleet's topology names the nodes that joined later, with
			// their addresses; it is not itself a node's event.
			for _, n := range ev.Topology.Nodes() {
				add(n.ID, n.Addr)
			}
		case ev.Identity != nil:
			add(ev.Node, ev.Identity.Addr)
		default:
			add(ev.Node, "")
		}
	}
	return nodes
}

// topologyOf is the fleet a recording starts with, its first topology
// event's (the fleet view opens on it; later ones come as events), nil
// for a recording without one (one or two servers, or format version 1).
func topologyOf(rec *record.Recording) *source.Topology {
	for _, ev := range rec.Events {
		if ev.Kind == source.EventTopology && ev.Topology != nil {
			t := *ev.Topology
			return &t
		}
	}
	return nil
}

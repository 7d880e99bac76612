package ui

import (
	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// fleetNodes are the fake cluster's nodes, as the monitor lists them.
func fleetNodes() []Node {
	var out []Node
	for i := 1; i <= 6; i++ {
		out = append(out, Node{ID: uitest.FleetID(i), Addr: uitest.FleetAddr(i)})
	}
	return out
}

// newFleetModel is a fleet model of the fake cluster at w x h.
func newFleetModel(w, h int, send func(source.NodeID, ...string)) Model {
	top := uitest.FleetTopo()
	return sized(New(Config{Nodes: fleetNodes(), Topology: &top, Now: uitest.FixedNow, Send: send}), w, h)
}

package cluster

import "github.com/vkwatch/vkwatch/source"

// Diff says what changed from old to cur, node by node: nodes added (in
// cur's order), nodes removed (in old's order), then for nodes in both a
// role, primary or health that changed, in cur's order. Two topologies of
// the same cluster give no change, whichever node answered.
func Diff(old, cur source.Topology) []source.TopologyChange {
	before := map[source.NodeID]source.TopologyNode{}
	for _, n := range old.Nodes() {
		before[n.ID] = n
	}
	after := map[source.NodeID]bool{}
	var added, removed, changed []source.TopologyChange
	for _, n := range cur.Nodes() {
		after[n.ID] = true
		o, ok := before[n.ID]
		if !ok {
			added = append(added, source.TopologyChange{Kind: source.NodeAdded, Node: n.ID, Addr: n.Addr, To: n.Role})
			continue
		}
		if o.Role != n.Role {
			changed = append(changed, source.TopologyChange{Kind: source.RoleChanged, Node: n.ID, Addr: n.Addr, From: o.Role, To: n.Role})
		} else if n.Role == source.RoleReplica && o.Primary != n.Primary {
			changed = append(changed, source.TopologyChange{Kind: source.PrimaryChanged, Node: n.ID, Addr: n.Addr,
				From: string(o.Primary), To: string(n.Primary)})
		}
		if o.Health != n.Health {
			changed = append(changed, source.TopologyChange{Kind: source.HealthChanged, Node: n.ID, Addr: n.Addr, From: o.Health, To: n.Health})
		}
	}
	for _, n := range old.Nodes() {
		if !after[n.ID] {
			removed = append(removed, source.TopologyChange{Kind: source.NodeRemoved, Node: n.ID, Addr: n.Addr, From: n.Role})
		}
	}
	return append(append(added, removed...), changed...)
}

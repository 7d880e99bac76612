package cluster

import (
	"reflect"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

func TestDiff(t *testing.T) {
	node := func(id, role, primary, health string) source.TopologyNode {
		return source.TopologyNode{ID: source.NodeID(id), Addr: id + ":1", Role: role, Primary: source.NodeID(primary), Health: health}
	}
	const P, R, ok, failed = source.RolePrimary, source.RoleReplica, source.HealthOnline, source.HealthFailed
	old := source.Topology{Shards: []source.Shard{
		{Nodes: []source.TopologyNode{node("a", P, "", ok), node("b", R, "a", ok)}},
		{Nodes: []source.TopologyNode{node("c", P, "", ok), node("d", R, "c", ok), node("e", R, "c", ok)}},
	}}
	// The same cluster asked of another node, shards in another order: no change.
	same := source.Topology{From: "elsewhere", Shards: []source.Shard{old.Shards[1], old.Shards[0]}}
	if ch := Diff(old, same); len(ch) != 0 {
		t.Errorf("Diff of one cluster = %+v, want none", ch)
	}
	cur := source.Topology{Shards: []source.Shard{
		{Nodes: []source.TopologyNode{node("b", P, "", ok), node("a", R, "b", ok)}}, // failover
		{Nodes: []source.TopologyNode{node("c", P, "", ok), node("d", R, "c", failed), node("f", R, "c", ok)}},
		{Nodes: []source.TopologyNode{node("g", P, "", ok), node("e", R, "g", ok)}}, // e moved to g
	}}
	want := []source.TopologyChange{
		{Kind: source.NodeAdded, Node: "f", Addr: "f:1", To: R},
		{Kind: source.NodeAdded, Node: "g", Addr: "g:1", To: P},
		{Kind: source.RoleChanged, Node: "b", Addr: "b:1", From: R, To: P},
		{Kind: source.RoleChanged, Node: "a", Addr: "a:1", From: P, To: R},
		{Kind: source.HealthChanged, Node: "d", Addr: "d:1", From: ok, To: failed},
		{Kind: source.PrimaryChanged, Node: "e", Addr: "e:1", From: "c", To: "g"},
	}
	if got := Diff(old, cur); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff =\n%+v\nwant\n%+v", got, want)
	}
	gone := Diff(cur, source.Topology{Shards: cur.Shards[:1]})
	if len(gone) != 5 || gone[0] != (source.TopologyChange{Kind: source.NodeRemoved, Node: "c", Addr: "c:1", From: P}) {
		t.Errorf("removal: %+v", gone)
	}
}

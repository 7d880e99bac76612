package ui

import (
	"reflect"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert/inerttest"
)

// TestInertNodesReachEveryString: every string a Node can carry, filled
// by reflection, comes out of inertNodes clean (ids excepted: keys, kept
// as given), and the caller's list keeps its text.
func TestInertNodesReachEveryString(t *testing.T) {
	ns := make([]Node, 2)
	inerttest.Fill(&ns[0])
	inerttest.Fill(&ns[1])
	got := inertNodes(ns)
	inerttest.Check(t, ns, got, "nodes", 2, reflect.TypeFor[source.NodeID]())
	if got[1].ID != ns[1].ID {
		t.Errorf("a node id changed: %q", got[1].ID)
	}
}

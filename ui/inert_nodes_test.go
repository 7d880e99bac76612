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
	raw, seen := inerttest.Raw(got, "nodes", reflect.TypeFor[source.NodeID]())
	for _, p := range raw {
		t.Errorf("%s left raw", p)
	}
	if seen < 2 {
		t.Fatalf("only %d strings checked", seen)
	}
	if got[1].ID != ns[1].ID {
		t.Errorf("a node id changed: %q", got[1].ID)
	}
	inerttest.Strings(ns, "nodes", func(path, s string) {
		if s != inerttest.Hostile {
			t.Errorf("original %s changed to %q", path, s)
		}
	})
}

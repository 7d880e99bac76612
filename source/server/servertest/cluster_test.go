package servertest_test

import (
	"testing"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestCluster checks the helper itself against the servers it starts:
// roles as asked, a failover swaps them, a killed replica comes back with
// its id, and an added node joins as a replica.
func TestCluster(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	if n := len(c.Nodes()); n != 6 {
		t.Fatalf("%d nodes, want 6", n)
	}
	roles := c.Roles()
	if len(roles) != 6 {
		t.Fatalf("roles of %d nodes, want 6: %v", len(roles), roles)
	}
	nodes := c.Nodes()
	for i, n := range nodes {
		want := ""
		if i >= 3 {
			want = nodes[i-3].ID
		}
		if roles[n.ID] != want {
			t.Errorf("node %d (%s): primary %q, want %q", i, n.Addr, roles[n.ID], want)
		}
	}

	rep := nodes[3]
	c.Failover(rep)
	if got := c.Roles(); got[rep.ID] != "" || got[nodes[0].ID] != rep.ID {
		t.Errorf("after failover of %s: roles %v", rep.Addr, got)
	}

	old := nodes[4]
	c.Kill(old)
	c.Restart(old)
	if got := c.Roles(); got[old.ID] != nodes[1].ID {
		t.Errorf("restarted %s: primary %q, want %q", old.Addr, got[old.ID], nodes[1].ID)
	}

	added := c.AddNode(nodes[2])
	if got := c.Roles(); got[added.ID] != nodes[2].ID || len(got) != 7 {
		t.Errorf("added %s: roles %v", added.Addr, got)
	}
}

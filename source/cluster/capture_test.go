//go:build capture

package cluster

// Regenerates testdata/ from a real cluster started here:
//
//	go test -tags capture -run TestCapture ./source/cluster
//
// The files are committed; the parser tests read them (parse_test.go).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

func TestCapture(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	c.Fill(300, 100)
	c.WaitOK()
	seed := c.Nodes()[0]
	write := func(name string) {
		ctx := context.Background()
		v, err := c.Client(seed).Do(ctx, "CLUSTER", "SHARDS").Result()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".shards.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := c.Client(seed).Do(ctx, "CLUSTER", "NODES").Text()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".nodes.txt"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("3x1")
	dead := c.Nodes()[5]
	c.Kill(dead)
	servertest.WaitFor(t, 30e9, "the killed replica to be marked failed", func() bool {
		v, err := c.Client(seed).Do(context.Background(), "CLUSTER", "NODES").Text()
		if err != nil {
			return false
		}
		top, err := ParseNodes(v)
		if err != nil {
			return false
		}
		n, _ := (&source.Topology{Shards: top}).Node(source.NodeID(dead.ID))
		return n.Health == source.HealthFailed
	})
	write("3x1-failed")
	t.Log("killed " + dead.ID + " at port " + strconv.Itoa(dead.Port))
}

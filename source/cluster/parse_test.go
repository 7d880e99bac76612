package cluster

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// loadShards reads a CLUSTER SHARDS reply captured from a real cluster
// (capture_test.go) back into the shape go-redis returns: arrays, strings
// and int64s.
func loadShards(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".shards.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
			return x
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return n
		}
		return v
	}
	return conv(v)
}

func loadNodes(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".nodes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shape is what two answers about one cluster must agree on.
type shape struct {
	Slots []source.SlotRange
	Nodes []string // "role id primary addr"
}

func shapeOf(shards []source.Shard) []shape {
	var out []shape
	for _, s := range shards {
		x := shape{Slots: s.Slots}
		for _, n := range s.Nodes {
			x.Nodes = append(x.Nodes, n.Role+" "+string(n.ID)+" "+string(n.Primary)+" "+n.Addr)
		}
		out = append(out, x)
	}
	return out
}

func TestParseCapturedReplies(t *testing.T) {
	for _, name := range []string{"3x1", "3x1-failed"} {
		t.Run(name, func(t *testing.T) {
			shards, err := ParseShards(loadShards(t, name), false)
			if err != nil {
				t.Fatal(err)
			}
			want := []source.SlotRange{{Start: 0, End: 5460}, {Start: 5461, End: 10921}, {Start: 10922, End: 16383}}
			if len(shards) != 3 {
				t.Fatalf("%d shards, want 3: %+v", len(shards), shards)
			}
			for i, s := range shards {
				if len(s.Slots) != 1 || s.Slots[0] != want[i] {
					t.Errorf("shard %d slots %v, want %v", i, s.Slots, want[i])
				}
				if len(s.Nodes) != 2 || s.Nodes[0].Role != source.RolePrimary || s.Nodes[1].Role != source.RoleReplica {
					t.Fatalf("shard %d nodes %+v, want a primary then a replica", i, s.Nodes)
				}
				p, r := s.Nodes[0], s.Nodes[1]
				if r.Primary != p.ID || p.Primary != "" {
					t.Errorf("shard %d: replica's primary %q, primary's %q; want %q and none", i, r.Primary, p.Primary, p.ID)
				}
				for _, n := range s.Nodes {
					if len(n.ID) != 40 || n.IP != "127.0.0.1" || !strings.HasPrefix(n.Addr, "127.0.0.1:") {
						t.Errorf("shard %d node %+v: want a 40-character id on 127.0.0.1", i, n)
					}
				}
			}
			// CLUSTER NODES, captured at the same moment, says the same.
			nodes, err := ParseNodes(loadNodes(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := shapeOf(shards), shapeOf(nodes); !reflect.DeepEqual(a, b) {
				t.Errorf("CLUSTER SHARDS and CLUSTER NODES disagree:\n%+v\n%+v", a, b)
			}
			failed := map[string]int{}
			for _, sh := range [][]source.Shard{shards, nodes} {
				for _, s := range sh {
					for _, n := range s.Nodes {
						if n.Health == source.HealthFailed {
							failed[string(n.ID)]++
						}
					}
				}
			}
			wantFailed := 0
			if name == "3x1-failed" {
				wantFailed = 1
			}
			if len(failed) != wantFailed {
				t.Errorf("failed nodes %v, want %d (in both replies)", failed, wantFailed)
			}
			for id, n := range failed {
				if n != 2 {
					t.Errorf("%s failed in one reply only", id)
				}
			}
		})
	}
}

// A Valkey 8-shaped reply (written by hand after valkey's documentation:
// fields vkwatch does not know, health "failed", a hostname, TLS ports)
// reads as well, and the TLS port is used when TLS is on.
func TestParseShardsValkeyShape(t *testing.T) {
	node := func(id string, role, health string) []any {
		return []any{"id", id, "port", int64(0), "tls-port", int64(6380), "ip", "10.0.0.7", "endpoint", "cache-1.internal",
			"hostname", "cache-1.internal", "role", role, "replication-offset", int64(72156), "health", health,
			"availability-zone", "eu-west-1a"}
	}
	reply := []any{
		[]any{"slots", []any{int64(0), int64(99), int64(200), int64(300)}, "shard-id", "abc",
			"nodes", []any{node("r1", "replica", "failed"), node("p1", "master", "online")}},
	}
	shards, err := ParseShards(reply, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []source.Shard{{
		Slots: []source.SlotRange{{Start: 0, End: 99}, {Start: 200, End: 300}},
		Nodes: []source.TopologyNode{
			{ID: "p1", Addr: "cache-1.internal:6380", IP: "10.0.0.7", Hostname: "cache-1.internal", Role: source.RolePrimary, Health: source.HealthOnline},
			{ID: "r1", Addr: "cache-1.internal:6380", IP: "10.0.0.7", Hostname: "cache-1.internal", Role: source.RoleReplica, Health: source.HealthFailed, Primary: "p1"},
		},
	}}
	if !reflect.DeepEqual(shards, want) {
		t.Errorf("got  %+v\nwant %+v", shards, want)
	}
	// RESP3 maps read the same.
	m := map[any]any{"slots": []any{int64(0), int64(99), int64(200), int64(300)},
		"nodes": []any{map[any]any{"id": "p1", "port": int64(7000), "ip": "10.0.0.8", "role": "master", "health": "online"}}}
	shards, err = ParseShards([]any{m}, false)
	if err != nil || len(shards) != 1 || shards[0].Nodes[0].Addr != "10.0.0.8:7000" {
		t.Errorf("RESP3 map: %+v, %v", shards, err)
	}
}

func TestParseShardsBadReplies(t *testing.T) {
	for _, reply := range []any{
		"OK",
		[]any{"slots"},
		[]any{[]any{"slots", []any{int64(5)}}},
		[]any{[]any{"slots", []any{int64(9), int64(3)}}},
		[]any{[]any{"slots", []any{int64(0), int64(16384)}}},
		[]any{[]any{"nodes", "x"}},
		[]any{[]any{"nodes", []any{[]any{"port", int64(1)}}}},
		[]any{[]any{int64(1), "x"}},
	} {
		if s, err := ParseShards(reply, false); err == nil {
			t.Errorf("ParseShards(%v) = %+v, want an error", reply, s)
		}
	}
}

func TestParseNodesLine(t *testing.T) {
	cases := []struct {
		line string
		want NodeLine
	}{
		{"07c3 127.0.0.1:30004@31004,cache-4 slave e7d1 0 1426238317239 4 connected",
			NodeLine{ID: "07c3", IP: "127.0.0.1", Port: 30004, Hostname: "cache-4", Flags: []string{"slave"}, Master: "e7d1", Link: "connected"}},
		{"e7d1 ::1:30001@31001 myself,master - 0 0 1 connected 0-5460 5462 [5461->-67ed] [5463-<-292f]",
			NodeLine{ID: "e7d1", IP: "::1", Port: 30001, Flags: []string{"myself", "master"}, Link: "connected",
				Slots: []source.SlotRange{{Start: 0, End: 5460}, {Start: 5462, End: 5462}}}},
		{"6ec2 :0@0 master,fail?,noaddr - 1426238316232 1426238315000 5 disconnected",
			NodeLine{ID: "6ec2", Port: 0, Flags: []string{"master", "fail?", "noaddr"}, Link: "disconnected"}},
	}
	for _, c := range cases {
		got, err := ParseNodesLine(c.line)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseNodesLine(%q)\n= %+v, %v\nwant %+v", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"",
		"07c3 127.0.0.1:30004@31004 slave",
		"07c3 127.0.0.1 slave - 0 0 1 connected",
		"07c3 127.0.0.1:99999@1 master - 0 0 1 connected",
		"07c3 127.0.0.1:7000@1 master - 0 0 1 connected 10-5",
		"07c3 127.0.0.1:7000@1 master - 0 0 1 connected 16384",
		"07c3 127.0.0.1:7000@1 master - 0 0 1 connected x",
	} {
		if l, err := ParseNodesLine(bad); err == nil {
			t.Errorf("ParseNodesLine(%q) = %+v, want an error", bad, l)
		}
	}
}

// Nodes still joining are not members; a replica listed before its
// primary still lands in its shard.
func TestParseNodesOrderAndHandshake(t *testing.T) {
	reply := "r1 10.0.0.2:7001@17001 slave p1 0 0 1 connected\n" +
		"h1 10.0.0.9:7009@17009 handshake - 0 0 0 disconnected\n" +
		"p1 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"
	shards, err := ParseNodes(reply)
	if err != nil {
		t.Fatal(err)
	}
	if got := shapeOf(shards); len(got) != 1 || len(got[0].Nodes) != 2 ||
		got[0].Nodes[0] != "primary p1  10.0.0.1:7000" || got[0].Nodes[1] != "replica r1 p1 10.0.0.2:7001" {
		t.Errorf("got %+v", got)
	}
}

func FuzzParseNodesLine(f *testing.F) {
	for _, name := range []string{"3x1", "3x1-failed"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".nodes.txt"))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			f.Add(l)
		}
	}
	f.Add("e7d1 [::1]:30001@31001,host myself,master - 0 0 1 connected 0-5460 [5461->-67ed]")
	f.Add(":0@0 - - - - - - -")
	f.Fuzz(func(t *testing.T, line string) {
		l, err := ParseNodesLine(line)
		if err != nil {
			return
		}
		if l.ID == "" || l.Port < 0 || l.Port > 65535 {
			t.Fatalf("accepted %q as %+v", line, l)
		}
		for _, s := range l.Slots {
			if s.Start < 0 || s.End < s.Start || s.End > 16383 {
				t.Fatalf("accepted %q with slots %v", line, l.Slots)
			}
		}
		// A whole reply of the line parses or fails, never panics.
		ParseNodes(line + "\n" + line)
	})
}

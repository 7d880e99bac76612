package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/nodefile"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// bigFleet is the size of the fleets of these tests: what CI's two cores
// hold beside everything else (servers at hz 1, as a fleet at rest).
const bigFleet = 200

// startFleet starts n servers at hz 1 (a fleet at rest), stopped when
// the test ends.
func startFleet(t *testing.T, n int) []*server.Server {
	t.Helper()
	return servertest.StartMany(t, n, server.Options{Args: []string{"--hz", "1"}, StartTimeout: time.Minute})
}

// commandCalls sums cmdstat_<cmd> calls over the servers, read by one
// client each (the test's own INFO commandstats counts once in info per
// server and read).
func commandCalls(t *testing.T, clients []*redis.Client, cmds ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, c := range clients {
		text, err := c.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(text) {
			for _, cmd := range cmds {
				var calls int64
				if _, err := fmt.Sscanf(line, "cmdstat_"+cmd+":calls=%d,", &calls); err == nil {
					out[cmd] += calls
				}
			}
		}
	}
	return out
}

// A fleet named by a nodes file: nodes join and leave live as the file
// changes, a bad file keeps the fleet as it was and says why, and what the
// fleet sends stays within its PING and sample budgets.
func TestFleetFollowsNodesFile(t *testing.T) {
	noLeaks(t)
	srvs := startFleet(t, bigFleet)
	clients := make([]*redis.Client, len(srvs))
	for i, s := range srvs {
		clients[i] = servertest.Client(t, s)
	}
	path := filepath.Join(t.TempDir(), "nodes.txt")
	writeNodes := func(from, to int, extra string) {
		var b strings.Builder
		b.WriteString("# the fleet under test\n")
		for _, s := range srvs[from:to] {
			fmt.Fprintf(&b, "%s  # a node\n", s.Addr)
		}
		b.WriteString(extra)
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	const first = 150
	writeNodes(0, first, "")
	list, err := nodefile.Read(path, source.ParseAddress)
	if err != nil {
		t.Fatal(err)
	}
	members := func(eps []source.Endpoint) []Member {
		ms := make([]Member, len(eps))
		for i, ep := range eps {
			ms[i] = Member{ID: ep.Node(), Endpoint: ep}
		}
		return ms
	}
	const sampleBudget = 50 // 150 nodes at rest: each every 3 s
	f := NewList(members(list.Endpoints), Config{
		SampleBudget: sampleBudget, Via: "nodes file", From: path,
		Follow: func(ctx context.Context, update func([]Member, error)) {
			nodefile.Follow(ctx, path, 20*time.Millisecond, source.ParseAddress, list,
				func(eps []source.Endpoint) { update(members(eps), nil) },
				func(err error) { update(nil, err) })
		},
	})
	top, err := f.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(top.Nodes()); n != first || top.Via != "nodes file" || top.From != path {
		t.Fatalf("topology of %d nodes via %q from %q", n, top.Via, top.From)
	}
	if top.SampleInterval != 3*time.Second || top.PingInterval != 150*time.Millisecond ||
		top.SampleBudget != sampleBudget || top.PingBudget != DefaultPingBudget {
		t.Fatalf("intervals: INFO every %s, PING every %s (budgets %d, %d): want 3s and 150ms",
			top.SampleInterval, top.PingInterval, top.SampleBudget, top.PingBudget)
	}
	f.Connect(context.Background())
	s := runFleet(t, f)
	// 150 dials at once on a loaded machine: some time out (3 s) and
	// are dialled again after their backoff; every node must be sampled
	// in the end, and two minutes bound the wait.
	if !waitUntil(2*time.Minute, func() bool { return len(lastEvents(s, source.EventSample)) == first }) {
		missing := 0
		last := lastEvents(s, 0)
		for _, m := range members(list.Endpoints) {
			if _, ok := lastEvents(s, source.EventSample)[m.ID]; !ok {
				if missing++; missing <= 5 {
					t.Errorf("%s: no sample; its last event: %+v", m.ID, last[m.ID])
				}
			}
		}
		t.Fatalf("%d of %d nodes not sampled within 2 minutes", missing, first)
	}

	// The budgets, as the servers count what they ran: over a window,
	// each node sampled at most once more than its interval allows, and
	// PINGs within the budget (one more a node at the edges). Each node's
	// count is read at its own moment, within [t0, t3]: the limits are
	// over that outer window, the least over the inner one [t1, t2].
	t0 := time.Now()
	before := commandCalls(t, clients[:first], "info", "ping")
	t1 := time.Now()
	time.Sleep(6 * time.Second) // the window measured, not a synchronisation
	t2 := time.Now()
	after := commandCalls(t, clients[:first], "info", "ping")
	outer, inner := time.Since(t0).Seconds(), t2.Sub(t1).Seconds()
	info := after["info"] - before["info"] - first // less the test's own first reading
	ping := after["ping"] - before["ping"]
	if limit := int64(sampleBudget*outer) + first; info > limit || info < first {
		t.Errorf("%d INFO in %.1f s on %d nodes: want %d to %d (budget %d a second)", info, outer, first, first, limit, sampleBudget)
	}
	if limit := int64(DefaultPingBudget*outer) + first; ping > limit {
		t.Errorf("%d PINGs in %.1f s: over the budget's %d", ping, outer, limit)
	}
	t.Logf("in %.1f to %.1f s: %d INFO (%.0f/s), %d PING (%.0f/s)", inner, outer, info, float64(info)/inner, ping, float64(ping)/inner)

	// Fifty leave, fifty join.
	n := len(s.events())
	writeNodes(50, bigFleet, "")
	var change *source.Topology
	servertest.WaitFor(t, 30*time.Second, "the topology after the file changed", func() bool {
		for _, ev := range s.since(n) {
			if ev.Kind == source.EventTopology && len(ev.Topology.Changes) > 0 {
				change = ev.Topology
				return true
			}
		}
		return false
	})
	var added, removed int
	for _, c := range change.Changes {
		switch c.Kind {
		case source.NodeAdded:
			added++
		case source.NodeRemoved:
			removed++
		}
	}
	if added != 50 || removed != 50 || len(change.Nodes()) != first {
		t.Errorf("changes: %d added, %d removed, %d nodes; want 50, 50, %d", added, removed, len(change.Nodes()), first)
	}
	servertest.WaitFor(t, 30*time.Second, "samples of the nodes that joined", func() bool {
		seen := map[source.NodeID]bool{}
		for _, ev := range s.since(n) {
			if ev.Kind == source.EventSample {
				seen[ev.Node] = true
			}
		}
		for _, srv := range srvs[first:] {
			if !seen[sourceNode(t, srv.Addr)] {
				return false
			}
		}
		return true
	})
	servertest.WaitFor(t, 30*time.Second, "the nodes that left to be let go (only the test's client on them)", func() bool {
		for _, c := range clients[:50] {
			if n, err := connectedClients(c); err != nil || n != 1 {
				return false
			}
		}
		return true
	})

	// A bad line: said with file and line, the fleet as it was.
	n = len(s.events())
	writeNodes(50, bigFleet, "127.0.0.1:99999\n")
	servertest.WaitFor(t, 30*time.Second, "the bad file said", func() bool {
		for _, ev := range s.since(n) {
			if ev.Kind == source.EventTopology && strings.Contains(ev.Topology.Err, "nodes.txt:152:") {
				change = ev.Topology
				return true
			}
		}
		return false
	})
	if len(change.Nodes()) != first || len(change.Changes) != 0 {
		t.Errorf("after a bad file: %d nodes, changes %v; want the %d as they were", len(change.Nodes()), change.Changes, first)
	}
}

func sourceNode(t *testing.T, addr string) source.NodeID {
	ep, err := source.ParseAddress(addr)
	if err != nil {
		t.Fatal(err)
	}
	return ep.Node()
}

func connectedClients(c *redis.Client) (int64, error) {
	text, err := c.Info(context.Background(), "clients").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(text) {
		var n int64
		if _, err := fmt.Sscanf(line, "connected_clients:%d", &n); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no connected_clients")
}

// lastEvents is the latest event of each node of the kind (every kind
// when 0).
func lastEvents(s *sink, kind source.EventKind) map[source.NodeID]source.Event {
	out := map[source.NodeID]source.Event{}
	for _, ev := range s.events() {
		if ev.Node != "" && (kind == 0 || ev.Kind == kind) {
			out[ev.Node] = ev
		}
	}
	return out
}

// waitUntil polls cond every 10 ms until it holds (true) or within has
// passed (false).
func waitUntil(within time.Duration, cond func() bool) bool {
	for end := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

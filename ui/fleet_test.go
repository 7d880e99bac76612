package ui

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestFleetGolden pins the fleet view's frames: the fake cluster of six
// nodes in three shards, one saving, one down (fleetScenario), at 80x24
// and 200x50, and the rolling save's confirmation line. Regenerate with
// go test ./ui -run TestFleetGolden -update and look at the diff.
func TestFleetGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"fleet_80x24", 80, 24, nil},
		{"fleet_200x50", 200, 50, nil},
		{"fleet_120x40_sorted_by_memory", 120, 40, []string{"o"}},
		{"fleet_80x24_full_help", 80, 24, []string{"?"}},
		{"fleet_80x24_pane", 80, 24, []string{"down", "enter"}},
		{"fleet_160x40_two_marked", 160, 40, []string{"down", " ", "down", "down", " ", "enter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := feed(t, newFleetModel(tc.w, tc.h, nil), uitest.FleetScenario(60*time.Second))
			for _, k := range tc.keys {
				m, _ = press(m, k)
			}
			golden.RequireEqual(t, m.View())
		})
	}
}

// fleetSends records what a fleet model sends, in order, by node address.
type fleetSends struct {
	mu    sync.Mutex
	calls []string
}

func (l *fleetSends) send(node source.NodeID, args ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 1; i <= 6; i++ {
		if uitest.FleetID(i) == node {
			l.calls = append(l.calls, uitest.FleetAddr(i)+" "+strings.Join(args, " "))
			return
		}
	}
	l.calls = append(l.calls, string(node)+" "+strings.Join(args, " "))
}

func (l *fleetSends) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// rowOrder is the addresses of the rows, top to bottom, as the view
// shows them.
func rowOrder(m Model) []string {
	var out []string
	for _, l := range strings.Split(plainView(m), "\n") {
		for i := 1; i <= 6; i++ {
			if strings.Contains(l, " "+uitest.FleetAddr(i)+" ") && !strings.Contains(l, "of "+uitest.FleetAddr(i)) {
				out = append(out, uitest.FleetAddr(i))
			}
		}
	}
	return out
}

// selected is the address of the row with the cursor.
func selected(t *testing.T, m Model) string {
	t.Helper()
	l := lineWith(t, m, "▸")
	for i := 1; i <= 6; i++ {
		if strings.Contains(l, uitest.FleetAddr(i)) {
			return uitest.FleetAddr(i)
		}
	}
	t.Fatalf("no node on the cursor's line %q", l)
	return ""
}

func TestFleetViewOpensForAClusterOrThreeServers(t *testing.T) {
	top := uitest.FleetTopo()
	two := top
	two.Shards = two.Shards[:1] // a cluster of two nodes
	for _, tc := range []struct {
		name  string
		cfg   Config
		fleet bool
	}{
		{"six cluster nodes", Config{Nodes: fleetNodes(), Topology: &top}, true},
		{"a cluster of two", Config{Nodes: fleetNodes()[:2], Topology: &two}, true},
		{"three servers", Config{Nodes: nodes(uitest.AddrA, uitest.AddrB, "127.0.0.1:7003")}, true},
		{"two servers", Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := setup(t, tc.cfg, 120, 40, nil)
			got := strings.Contains(plainView(m), "  # node ")
			if got != tc.fleet {
				t.Fatalf("fleet view %v, want %v:\n%s", got, tc.fleet, plainView(m))
			}
		})
	}
	// A list of three is three shards of one, and says so.
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB, "127.0.0.1:7003")}, 120, 40, nil)
	if !strings.Contains(plainView(m), "vkwatch · 3 servers, one shard each") || len(strings.Split(plainView(m), "\n")) != 40 {
		t.Fatalf("list header:\n%s", plainView(m))
	}
}

func TestFleetSixNodesFit80x24(t *testing.T) {
	m := feed(t, newFleetModel(80, 24, nil), uitest.FleetScenario(60*time.Second))
	v := plainView(m)
	if lines := strings.Split(v, "\n"); len(lines) != 24 {
		t.Fatalf("%d lines, want 24", len(lines))
	}
	for _, l := range strings.Split(v, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line of %d cells: %q", w, l)
		}
	}
	want := []string{uitest.FleetAddr(1), uitest.FleetAddr(4), uitest.FleetAddr(2), uitest.FleetAddr(5), uitest.FleetAddr(3), uitest.FleetAddr(6)}
	if got := rowOrder(m); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want shard by shard, primary first: %v\n%s", got, want, v)
	}
	for _, s := range []string{
		"cluster: 6 nodes in 3 shards (CLUSTER SHARDS from 127.0.0.1:30001)",
		"PING every 6ms per node", "5 up, 1 down, 1 saving", "sorted by shard",
		"✗ connection refused",                    // node 6's badge
		"▶ fork ",                                 // node 4 saving
		"fork 15.0s pause 1.20ms", "cow 17.0 MiB", // node 5's last save
		"slots 0-5460", "of 127.0.0.1:30001",
	} {
		if !strings.Contains(v, s) {
			t.Errorf("no %q in\n%s", s, v)
		}
	}
	if !strings.Contains(lineWith(t, m, uitest.FleetAddr(4)), "ETA") || !strings.Contains(v, "cow 10.4 MiB proc") {
		t.Errorf("the running save's ETA and live cow (with its instrument):\n%s", v)
	}
}

func TestFleetSelectSortMark(t *testing.T) {
	m := feed(t, newFleetModel(120, 40, nil), uitest.FleetScenario(60*time.Second))
	if got := selected(t, m); got != uitest.FleetAddr(1) {
		t.Fatalf("selected %s at start", got)
	}
	for _, k := range []string{"down", "j", "down"} {
		m, _ = press(m, k)
	}
	if got := selected(t, m); got != uitest.FleetAddr(5) { // 1, 4, 2, 5
		t.Fatalf("selected %s after three downs", got)
	}
	m, _ = press(m, "k")
	if got := selected(t, m); got != uitest.FleetAddr(2) {
		t.Fatalf("selected %s after k", got)
	}
	// Sorting by memory: the largest footprint first; the selection
	// stays on its node.
	m, _ = press(m, "o")
	if !strings.Contains(plainView(m), "sorted by memory (o: ops/s)") || !strings.Contains(plainView(m), "footprint▼") {
		t.Fatalf("sort header:\n%s", plainView(m))
	}
	want := []string{uitest.FleetAddr(6), uitest.FleetAddr(5), uitest.FleetAddr(4), uitest.FleetAddr(3), uitest.FleetAddr(2), uitest.FleetAddr(1)}
	if got := rowOrder(m); !slices.Equal(got, want) {
		t.Fatalf("by memory %v, want %v\n%s", got, want, plainView(m))
	}
	if got := selected(t, m); got != uitest.FleetAddr(2) {
		t.Fatalf("selection moved to %s when sorting", got)
	}
	for _, s := range []string{"ops/s", "latency", "last save cost", "copy-on-write", "shard"} {
		m, _ = press(m, "o")
		if !strings.Contains(plainView(m), "sorted by "+s+" ") {
			t.Fatalf("after o, want sorted by %s:\n%s", s, plainView(m))
		}
		if s == "last save cost" && rowOrder(m)[0] != uitest.FleetAddr(5) {
			t.Errorf("by last save cost, first %s, want %s (the only one that saved)", rowOrder(m)[0], uitest.FleetAddr(5))
		}
	}
	// space marks, and marks again unmark; m marks too (space is replay's).
	m, _ = press(m, " ")
	if !strings.Contains(lineWith(t, m, "▸"), "▸*") {
		t.Fatalf("no mark on the selected row:\n%s", plainView(m))
	}
	m, _ = press(m, "m")
	if strings.Contains(plainView(m), "*") {
		t.Fatalf("m did not unmark:\n%s", plainView(m))
	}
}

func TestFleetEnterOpensThePaneWithItsHistoryAndEscReturns(t *testing.T) {
	m := feed(t, newFleetModel(120, 40, nil), uitest.FleetScenario(60*time.Second))
	for range 3 {
		m, _ = press(m, "down") // 127.0.0.1:30005, which saved from 10 s to 25 s
	}
	m, _ = press(m, "enter")
	v := plainView(m)
	if strings.Contains(v, "  # node ") || !strings.Contains(v, uitest.FleetAddr(5)+" · redis 7.0.15") {
		t.Fatalf("enter did not open %s's pane:\n%s", uitest.FleetAddr(5), v)
	}
	// Its history is the store's: the save before the pane was opened is
	// in the last-save block and on the marker row.
	if !strings.Contains(v, "last save BGSAVE fork by vkwatch") || !strings.Contains(v, "F") {
		t.Fatalf("the pane lacks the node's history:\n%s", v)
	}
	if !strings.Contains(v, "esc fleet") {
		t.Errorf("help does not say esc goes back:\n%s", v)
	}
	m, _ = press(m, "esc")
	if !strings.Contains(plainView(m), "  # node ") || selected(t, m) != uitest.FleetAddr(5) {
		t.Fatalf("esc did not return to the fleet view on the same node:\n%s", plainView(m))
	}
	// Two marked: side by side, as today's two panes; b saves the focused.
	var log fleetSends
	m = feed(t, newFleetModel(200, 50, log.send), uitest.FleetScenario(60*time.Second))
	m, _ = press(m, " ")
	m, _ = press(m, "down")
	m, _ = press(m, "down")
	m, _ = press(m, " ")
	m, _ = press(m, "enter")
	v = plainView(m)
	top := strings.Split(v, "\n")[1]
	if !strings.Contains(top, uitest.FleetAddr(1)+" · redis") || !strings.Contains(top, uitest.FleetAddr(2)+" · redis") ||
		strings.Index(top, uitest.FleetAddr(1)) > strings.Index(top, uitest.FleetAddr(2)) {
		t.Fatalf("two marked not side by side:\n%s", v)
	}
	m, _ = press(m, "tab")
	m, cmd := press(m, "b")
	run(t, cmd)
	if got := log.got(); !slices.Equal(got, []string{uitest.FleetAddr(2) + " BGSAVE"}) {
		t.Fatalf("b in the second pane sent %v", got)
	}
	m, _ = press(m, "esc")
	if !strings.Contains(plainView(m), "  # node ") {
		t.Fatalf("esc did not return:\n%s", plainView(m))
	}
}

func TestFleetBSavesTheSelectedNodeWithTheMemoryCheck(t *testing.T) {
	var log fleetSends
	m := feed(t, newFleetModel(120, 40, log.send), uitest.FleetScenario(30*time.Second))
	m, _ = press(m, "down")
	m, cmd := press(m, "b")
	run(t, cmd)
	if got := log.got(); !slices.Equal(got, []string{uitest.FleetAddr(4) + " BGSAVE"}) {
		t.Fatalf("b sent %v, want BGSAVE to the selected node", got)
	}
	// A node whose last fork needed more than the host has: held, then
	// sent when b comes again.
	risky := riskySample(uitest.FleetID(5), 31*time.Second)
	m = feed(t, m, []source.Event{risky})
	m, _ = press(m, "down")
	m, _ = press(m, "down")
	m, cmd = press(m, "b")
	if cmd != nil || !strings.Contains(plainView(m), "b again: save anyway") {
		t.Fatalf("no memory warning:\n%s", plainView(m))
	}
	m, cmd = press(m, "b")
	run(t, cmd)
	if got := log.got(); len(got) != 2 || got[1] != uitest.FleetAddr(5)+" BGSAVE" {
		t.Fatalf("b again sent %v", got)
	}
	// A is not offered for a fleet; it says so and sends nothing.
	m, cmd = press(m, "A")
	if cmd != nil || !strings.Contains(plainView(m), "a rolling AOF rewrite is not offered") {
		t.Fatalf("A:\n%s", plainView(m))
	}
}

// riskySample is a sample of node whose last fork's copy-on-write (1 GiB)
// is more than the host's MemAvailable (512 MiB).
func riskySample(node source.NodeID, off time.Duration) source.Event {
	s := uitest.NewFleetNode(5).Sample(off)
	s.Info.Role = "slave"
	s.Info.RDBLastCOW = source.Some[int64](1 << 30)
	s.Proc.HostMemAvailable = source.Some[int64](512 << 20)
	return source.Event{Node: node, Kind: source.EventSample, Offset: off, At: uitest.Epoch.Add(off), Sample: s}
}

// rollSim plays the servers' side of a rolling save on a fleet model:
// the answers to its commands, the samples of the saves they start, and
// the saves' ends, each as an event.
type rollSim struct {
	t     *testing.T
	m     Model
	log   *fleetSends
	nodes map[int]*uitest.FleetNode
	at    time.Duration
}

func newRollSim(t *testing.T, w, h int) *rollSim {
	r := &rollSim{t: t, log: &fleetSends{}, nodes: map[int]*uitest.FleetNode{}}
	r.m = newFleetModel(w, h, r.log.send)
	top := uitest.FleetTopo()
	r.m = feed(t, r.m, []source.Event{{Kind: source.EventTopology, Topology: &top}})
	for i := 1; i <= 6; i++ {
		r.nodes[i] = uitest.NewFleetNode(i)
		r.feed(r.nodes[i].Connected(0, role(i)))
	}
	r.idle()
	return r
}

func role(i int) string { return map[bool]string{true: "master", false: "slave"}[i <= 3] }

// feed gives the model events and runs the commands it returns.
func (r *rollSim) feed(evs ...source.Event) {
	r.t.Helper()
	for _, ev := range evs {
		nm, cmd := r.m.Update(EventMsg(ev))
		r.m = nm.(Model)
		run(r.t, cmd)
	}
}

// idle samples every node once, a tick later.
func (r *rollSim) idle() {
	r.at += uitest.Tick
	for i := 1; i <= 6; i++ {
		r.feed(r.nodes[i].SampleEvent(r.at, role(i)))
	}
}

// key presses a key and runs its command.
func (r *rollSim) key(k string) {
	r.t.Helper()
	m, cmd := press(r.m, k)
	r.m = m
	run(r.t, cmd)
}

// answer is node i's answer to BGSAVE: accepted, or refused with errText.
func (r *rollSim) answer(i int, errText string) {
	c := &source.CommandResult{Command: "BGSAVE", Sent: r.at, Done: r.at + time.Millisecond, Err: errText}
	if errText == "" {
		c.Reply = "Background saving started"
	}
	r.feed(source.Event{Node: uitest.FleetID(i), Kind: source.EventCommand, Offset: r.at + time.Millisecond, Command: c})
}

// save runs node i's save for d (samples every tick), then ends it.
func (r *rollSim) save(i int, d time.Duration) {
	n := r.nodes[i]
	n.StartSave(r.at+uitest.Tick, source.SaveFork)
	for end := r.at + d; r.at < end; {
		r.idle()
	}
	r.at += uitest.Tick
	r.feed(n.EndSaveEvent(r.at))
	r.idle()
}

func TestFleetRollingSaveConfirmProgressAndStop(t *testing.T) {
	r := newRollSim(t, 80, 24)
	r.key("B")
	v := plainView(r.m)
	if len(r.log.got()) != 0 {
		t.Fatalf("B sent %v before the confirmation", r.log.got())
	}
	if !strings.Contains(v, "rolling BGSAVE of 3 nodes, one per shard") ||
		!strings.Contains(v, "1: 127.0.0.1:30004  2: 127.0.0.1:30005  3: 127.0.0.1:30006") ||
		!strings.Contains(v, "B again: start the rolling save • any other key: cancel") {
		t.Fatalf("confirmation:\n%s", v)
	}
	// Where the width holds them, each node with its forecast and
	// headroom.
	wide := newRollSim(t, 200, 50)
	wide.key("B")
	if v := plainView(wide.m); !strings.Contains(v, "1: 127.0.0.1:30004 ~150 MiB bound ok  2: 127.0.0.1:30005 ~175 MiB bound ok  3: 127.0.0.1:30006 ~200 MiB bound ok") {
		t.Errorf("200x50 confirmation without the forecasts:\n%s", v)
	}
	// Any other key cancels: nothing planned, nothing sent.
	r.key("o")
	if strings.Contains(plainView(r.m), "rolling BGSAVE") || len(r.log.got()) != 0 {
		t.Fatalf("o did not cancel the plan:\n%s", plainView(r.m))
	}
	r.key("o")
	r.key("o")
	r.key("o")
	r.key("o") // back to shard order
	r.key("B")
	r.key("B")
	if got := r.log.got(); !slices.Equal(got, []string{uitest.FleetAddr(4) + " BGSAVE"}) {
		t.Fatalf("B B sent %v, want the first replica's BGSAVE alone", got)
	}
	if v := plainView(r.m); !strings.Contains(v, "rolling save 0 of 3 saved · ETA after the first save") ||
		!strings.Contains(v, "roll 1/3 BGSAVE sent") || !strings.Contains(v, "roll 2/3 waiting") ||
		!strings.Contains(v, "saving 127.0.0.1:30004 · next 127.0.0.1:30005") {
		t.Fatalf("running:\n%s", v)
	}
	r.answer(4, "")
	r.save(4, 2*time.Second)
	if got := r.log.got(); !slices.Equal(got, []string{uitest.FleetAddr(4) + " BGSAVE", uitest.FleetAddr(5) + " BGSAVE"}) {
		t.Fatalf("after the first save: sent %v", got)
	}
	if v := plainView(r.m); !strings.Contains(v, "rolling save 1 of 3 saved · ETA 4.") || !strings.Contains(v, "roll 1/3 saved") {
		t.Fatalf("one done:\n%s", v)
	}
	// The second node refuses: the roll stops there, with its words.
	r.answer(5, "NOPERM this user has no permissions to run the 'bgsave' command")
	v = plainView(r.m)
	if !strings.Contains(v, "✗ rolling save stopped at 1 of 3: BGSAVE on 127.0.0.1:30005: NOPERM") ||
		!strings.Contains(v, "roll 3/3 not started") {
		t.Fatalf("stop:\n%s", v)
	}
	r.idle()
	if n := len(r.log.got()); n != 2 {
		t.Fatalf("%d commands after the stop, want 2", n)
	}
	r.key("esc")
	if strings.Contains(plainView(r.m), "rolling save stopped") {
		t.Fatalf("esc did not clear the ended roll:\n%s", plainView(r.m))
	}
}

func TestFleetRollingSaveWaitsEscCancelsAndHolds(t *testing.T) {
	r := newRollSim(t, 120, 40)
	// A save the node started on its own (a replica's full sync on its
	// primary, node 1): the roll waits for it.
	n1 := r.nodes[1]
	n1.StartSave(r.at+uitest.Tick, source.SaveFork)
	n1.Save.Trigger = source.Trigger{Kind: source.TriggerReplica, Detail: "replica 127.0.0.1:30004, diskless"}
	r.idle()
	r.key("B")
	r.key("B")
	if got := r.log.got(); len(got) != 0 {
		t.Fatalf("sent %v while a full sync runs", got)
	}
	v := plainView(r.m)
	if !strings.Contains(v, "waiting for a replica's full sync on 127.0.0.1:30001 (not vkwatch's)") ||
		!strings.Contains(v, "▶ by replica 127.0.0.1:30004") {
		t.Fatalf("not waiting for the full sync:\n%s", v)
	}
	r.at += uitest.Tick
	r.feed(n1.EndSaveEvent(r.at))
	r.idle()
	if got := r.log.got(); !slices.Equal(got, []string{uitest.FleetAddr(4) + " BGSAVE"}) {
		t.Fatalf("after the full sync: sent %v", got)
	}
	// esc cancels the nodes not started; the running save finishes.
	r.key("esc")
	if v := plainView(r.m); !strings.Contains(v, "rolling save cancelled at 0 of 3") {
		t.Fatalf("esc:\n%s", v)
	}
	r.answer(4, "")
	r.save(4, time.Second)
	if v := plainView(r.m); !strings.Contains(v, "rolling save cancelled after 1 of 3 saved") || len(r.log.got()) != 1 {
		t.Fatalf("after the cancel: %v\n%s", r.log.got(), v)
	}
	r.key("esc")

	// The memory check holds a node; B sends it anyway.
	r.feed(riskySample(uitest.FleetID(4), r.at+time.Millisecond))
	r.key("B")
	r.key("B")
	v = plainView(r.m)
	if len(r.log.got()) != 1 || !strings.Contains(v, "held by the memory check: 127.0.0.1:30004: a fork save may need") ||
		!strings.Contains(v, "B: save it anyway • esc: cancel the rolling save") {
		t.Fatalf("not held: %v\n%s", r.log.got(), v)
	}
	r.key("B")
	if got := r.log.got(); len(got) != 2 || got[1] != uitest.FleetAddr(4)+" BGSAVE" {
		t.Fatalf("B on a held roll sent %v", got)
	}
}

func TestFleetRollingSaveReadOnly(t *testing.T) {
	top := uitest.FleetTopo()
	var log fleetSends
	m := feed(t, sized(New(Config{Nodes: fleetNodes(), Topology: &top, Send: log.send, ReadOnly: true, Now: uitest.FixedNow}), 120, 40),
		uitest.FleetScenario(10*time.Second))
	m, cmd := press(m, "B")
	m, cmd2 := press(m, "B")
	if cmd != nil || cmd2 != nil || !strings.Contains(plainView(m), "read-only: rolling save not started (--read-only)") {
		t.Fatalf("read-only B:\n%s", plainView(m))
	}
}

func TestFleetNodesJoinAndLeave(t *testing.T) {
	m := feed(t, newFleetModel(120, 40, nil), uitest.FleetScenario(20*time.Second))
	top := uitest.FleetTopo()
	// Node 7 joins shard 2 as a replica; node 6 leaves.
	top.Shards[1].Nodes = append(top.Shards[1].Nodes, source.TopologyNode{ID: "n7", Addr: "127.0.0.1:30007", Role: source.RoleReplica, Primary: uitest.FleetID(2)})
	top.Shards[2].Nodes = top.Shards[2].Nodes[:1]
	top.Changes = []source.TopologyChange{{Kind: source.NodeAdded, Node: "n7"}, {Kind: source.NodeRemoved, Node: uitest.FleetID(6)}}
	at := 20 * time.Second
	m = feed(t, m, []source.Event{{Kind: source.EventTopology, Offset: at, Topology: &top},
		{Node: "n7", Kind: source.EventConnected, Offset: at, Identity: &source.Identity{Addr: "127.0.0.1:30007", Version: "7.0.15"}},
		uitest.NewFleetNode(7).SampleEventFor("n7", at+uitest.Tick)})
	v := plainView(m)
	if !strings.Contains(v, "127.0.0.1:30007") || !strings.Contains(v, "cluster: 6 nodes in 3 shards") {
		t.Fatalf("no row for the node that joined:\n%s", v)
	}
	if !strings.Contains(lineWith(t, m, "gone: no longer in the fleet"), "") || !strings.Contains(v, uitest.FleetAddr(6)) {
		t.Fatalf("the node that left is not marked gone:\n%s", v)
	}
	// The joined node's row is under its shard's primary; the gone one
	// after its shard's.
	order := strings.Index(v, uitest.FleetAddr(2)) < strings.Index(v, "127.0.0.1:30007") &&
		strings.Index(v, "127.0.0.1:30007") < strings.Index(v, uitest.FleetAddr(3)) &&
		strings.Index(v, uitest.FleetAddr(3)) < strings.Index(v, uitest.FleetAddr(6))
	if !order {
		t.Fatalf("rows out of shard order:\n%s", v)
	}
	if !strings.Contains(v, "6 up") || !strings.Contains(v, "1 gone") {
		t.Fatalf("counts:\n%s", v)
	}
}

func TestFleetMoreRowsScroll(t *testing.T) {
	m := feed(t, newFleetModel(80, 14, nil), uitest.FleetScenario(10*time.Second))
	if !strings.Contains(plainView(m), "rows 1-3 of 6") {
		t.Fatalf("no scroll mark at 80x14:\n%s", plainView(m))
	}
	for range 5 {
		m, _ = press(m, "down")
	}
	if got := selected(t, m); got != uitest.FleetAddr(6) || !strings.Contains(plainView(m), "rows 4-6 of 6") {
		t.Fatalf("selection %s, view:\n%s", got, plainView(m))
	}
	if strings.Contains(plainView(m), uitest.FleetAddr(1)+" ") {
		t.Fatalf("the first row still shows:\n%s", plainView(m))
	}
}

func TestFleetRollingSaveDone(t *testing.T) {
	r := newRollSim(t, 80, 24)
	r.key("B")
	r.key("B")
	for _, i := range []int{4, 5, 6} {
		r.answer(i, "")
		r.save(i, time.Second)
	}
	want := []string{uitest.FleetAddr(4) + " BGSAVE", uitest.FleetAddr(5) + " BGSAVE", uitest.FleetAddr(6) + " BGSAVE"}
	if got := r.log.got(); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	v := plainView(r.m)
	if !strings.Contains(v, "rolling save done: 3 of 3 saved in 4.0s") || !strings.Contains(v, "roll 3/3 saved") {
		t.Fatalf("done:\n%s", v)
	}
	// r: one report row per node saved.
	r.key("r")
	for _, i := range []int{4, 5, 6} {
		if n := strings.Count(plainView(r.m), uitest.FleetAddr(i)); n != 1 {
			t.Errorf("%s in %d report rows, want 1:\n%s", uitest.FleetAddr(i), n, plainView(r.m))
		}
	}
}

func TestKeysTypedTogetherAreKeysEach(t *testing.T) {
	m := feed(t, newFleetModel(120, 40, nil), uitest.FleetScenario(10*time.Second))
	nm, _ := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj j")})
	m = nm.(Model)
	if got := selected(t, m); got != uitest.FleetAddr(5) || !strings.Contains(lineWith(t, m, uitest.FleetAddr(2)+" "), "*") {
		t.Fatalf("jj j: selected %s, want %s with %s marked:\n%s", got, uitest.FleetAddr(5), uitest.FleetAddr(2), plainView(m))
	}
}

// TestFleetRollingSaveExpectsItsNextNode: the fleet view's roll tells the
// fleet (Config.Expect) the node it starts next, as the headless roll
// does, so that node is probed finely before it forks; once the roll is
// over the expectation is withdrawn.
func TestFleetRollingSaveExpectsItsNextNode(t *testing.T) {
	r := newRollSim(t, 120, 40)
	var mu sync.Mutex
	var told []string
	r.m.cfg.Expect = func(why string, nodes ...source.NodeID) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, fmt.Sprintf("%s %v", why, nodes))
	}
	said := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
	r.key("B")
	r.idle() // the next samples carry what the roll wants told
	if got := said(); !slices.Equal(got, []string{fmt.Sprintf("next in the roll [%s]", uitest.FleetID(4))}) {
		t.Fatalf("planned roll: Expect told %q, want its first node", got)
	}
	r.key("B")
	r.idle()
	if got := said(); got[len(got)-1] != fmt.Sprintf("next in the roll [%s]", uitest.FleetID(5)) {
		t.Fatalf("first node sent: Expect told %q, want the second node next", got)
	}
	r.answer(4, "")
	r.save(4, time.Second)
	if got := said(); got[len(got)-1] != fmt.Sprintf("next in the roll [%s]", uitest.FleetID(6)) {
		t.Fatalf("second node sent: Expect told %q, want the third next", got)
	}
	n := len(said())
	r.idle()
	if len(said()) != n {
		t.Fatalf("Expect told again with nothing changed: %q", said())
	}
	r.answer(5, "NOPERM this user has no permissions to run the 'bgsave' command")
	r.idle()
	if got := said(); got[len(got)-1] != " []" {
		t.Fatalf("roll stopped: Expect told %q, want the expectation withdrawn", got)
	}
}

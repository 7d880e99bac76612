package ui_test

// Frame benchmarks through the exported API only, as cmd/vkwatch drives the
// model: one EventsMsg per frame, then View. They are what the README's
// Performance section and cmd/vkperf report for the drawing target (a frame
// of two panes at 200x50, with charts the height of the terminal, in
// <= 2 ms):
//
//	go test ./ui -run '^$' -bench 'Frame' -benchmem

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui"
)

const (
	benchInterval = 200 * time.Millisecond // vkwatch's default --interval
	benchHistory  = 2 * time.Minute        // and --history
)

var benchEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// benchServer makes plausible samples for one server: every field the panes
// draw is present, and a fork save runs from 60 s to 75 s so that a span,
// a progress bar and a report are on screen.
type benchServer struct {
	idx  int
	seq  uint64
	node source.NodeID // when set, the node the samples are of (else benchNodes[idx])
}

func (f *benchServer) sample(off time.Duration) source.Event {
	f.seq++
	x := off.Seconds()
	used := int64((100 + 8*math.Sin(x/7)) * (1 << 20))
	ops := 50000 + 8000*math.Sin(x/5)
	ping := time.Duration(120+60*math.Sin(x/3)) * time.Microsecond
	s := &source.Sample{
		Seq: f.seq, Offset: off, At: benchEpoch.Add(off),
		Info: source.Info{
			Version: "7.0.15", Role: "master", ProcessID: source.Some[int64](4000 + int64(f.idx)),
			UsedMemory: source.Some(used), RSS: source.Some(used + 12<<20), MaxMemory: source.Some[int64](0),
			TotalCommands: source.Some(int64(x * ops)), InstOps: source.Some(int64(ops)),
			CurrentCOW: source.Some[int64](0),
		},
		Config:          source.SaveConfig{Err: "ERR unknown config bgsave-default-method"},
		OpsPerSec:       source.Some(ops),
		WriterOpsPerSec: source.Some(ops * 0.98),
		Ping:            source.Latency{Count: 100, Min: ping / 2, P50: ping, P99: ping * 2, Max: ping * 3},
		Ping10s:         source.Latency{Count: 5000, Min: 40 * time.Microsecond, P50: 130 * time.Microsecond, P99: 410 * time.Microsecond, Max: 2100 * time.Microsecond},
		Proc: source.ProcMem{RSS: source.Some(used + 13<<20), PSS: source.Some(used + 12<<20), HostMemAvailable: source.Some[int64](3 << 30),
			Cgroup: "v2:/bench", CgroupUsage: source.Some(used + 40<<20), CgroupLimit: source.Some[int64](1 << 30)},
		COW: source.Some[int64](0), COWFrom: source.FromProc,
		Footprint: source.Some(used + 13<<20), FootprintFrom: source.FromProc,
	}
	// A save from 60 s to 75 s of every two minutes. In durations, not
	// float seconds: a start computed from floats moved by a few
	// nanoseconds from sample to sample, so the store saw a new save at
	// every sample and the benchmark timed a curve started 75 times over.
	if cyc := off % (120 * time.Second); cyc >= 60*time.Second && cyc < 75*time.Second {
		el := cyc - 60*time.Second
		cow := int64(el/benchInterval) * 256 << 10
		s.Save = &source.SaveProgress{
			Kind: source.SaveFork, Started: off - el, Elapsed: el,
			Processed: source.Some(int64(el/time.Second) * 65536), Total: source.Some[int64](1 << 20),
			ETA: source.Some(15*time.Second - el), LiveCOW: source.Some(cow),
		}
		s.Info.CurrentCOW = source.Some(cow)
		s.Proc.ChildPID = source.Some[int64](5000)
		s.Proc.ChildPrivateDirty = source.Some(cow)
		s.COW = source.Some(cow)
		s.Footprint = source.Some(s.Proc.RSS.V + cow)
		s.Save.Trigger = source.Trigger{Kind: source.TriggerUser}
	}
	node := f.node
	if node == "" {
		node = benchNodes[f.idx].ID
	}
	return source.Event{Node: node, Kind: source.EventSample, Offset: off, At: s.At, Sample: s}
}

// benchNodes are the two servers of the frame benchmarks.
var benchNodes = []ui.Node{{ID: "127.0.0.1:6379", Addr: "127.0.0.1:6379"}, {ID: "127.0.0.1:6380", Addr: "127.0.0.1:6380"}}

// benchModel is two panes at 200x50 with a full history, and the offset
// of its last samples.
func benchModel(b *testing.B) (tea.Model, []*benchServer, time.Duration) {
	b.Helper()
	var m tea.Model = ui.New(ui.Config{
		Nodes: benchNodes, History: benchHistory, Interval: benchInterval,
		Send: func(source.NodeID, ...string) {}, Now: func() time.Time { return benchEpoch },
	})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	srvs := []*benchServer{{idx: 0}, {idx: 1}}
	for i := range srvs {
		m, _ = m.Update(ui.EventMsg{Node: benchNodes[i].ID, Kind: source.EventConnected, At: benchEpoch,
			Identity: &source.Identity{Addr: benchNodes[i].Addr, ServerName: "redis", Version: "7.0.15", Role: "master", Local: true}})
	}
	var off time.Duration
	for off = 0; off <= benchHistory+10*time.Second; off += benchInterval {
		m, _ = m.Update(ui.EventsMsg{srvs[0].sample(off), srvs[1].sample(off)})
	}
	if len(m.View()) == 0 {
		b.Fatal("empty view")
	}
	return m, srvs, off
}

// benchFrames times Update with one sample of each server plus View, the
// offset moving by step per frame.
func benchFrames(b *testing.B, step time.Duration) {
	m, srvs, off := benchModel(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		off += step
		m, _ = m.Update(ui.EventsMsg{srvs[0].sample(off), srvs[1].sample(off)})
		if len(m.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}

// BenchmarkFrame is one frame as it happens at defaults: a sample from each
// server (200 ms apart), folded and drawn, then View. Most frames only move
// the numbers; one in a few also scrolls the charts by a column.
func BenchmarkFrame(b *testing.B) { benchFrames(b, benchInterval) }

// BenchmarkFrameScroll is the worst frame: the right edge moves by 5 s,
// so every chart of both panes is redrawn.
func BenchmarkFrameScroll(b *testing.B) { benchFrames(b, 5*time.Second) }

// BenchmarkFrameView is what bubbletea's renderer calls up to 60 times a
// second: View of the drawn frame.
func BenchmarkFrameView(b *testing.B) {
	m, _, _ := benchModel(b)
	ui.BenchView(b, m)
}

// benchFleet is a cluster of shards shards (a primary and a replica
// each) in the fleet view at 200x50 with a full history, and the offset
// of its last samples.
func benchFleet(b *testing.B, shards int) (tea.Model, []*benchServer, time.Duration) {
	b.Helper()
	// The PING budget of 1,000 a second shared by the nodes.
	top := source.Topology{Cluster: true, Via: "CLUSTER SHARDS", From: "127.0.0.1:30001", PingInterval: time.Duration(2*shards) * time.Millisecond}
	var nodes []ui.Node
	var srvs []*benchServer
	for sh := range shards {
		var shard source.Shard
		for k, role := range []string{source.RolePrimary, source.RoleReplica} {
			i := sh + shards*k
			id := source.NodeID(fmt.Sprintf("%040x", i+1))
			addr := fmt.Sprintf("127.0.0.1:%d", 30001+i)
			shard.Nodes = append(shard.Nodes, source.TopologyNode{ID: id, Addr: addr, IP: "127.0.0.1", Role: role, Health: source.HealthOnline})
			nodes = append(nodes, ui.Node{ID: id, Addr: addr})
			srvs = append(srvs, &benchServer{idx: i % 2, node: id})
		}
		top.Shards = append(top.Shards, shard)
	}
	var m tea.Model = ui.New(ui.Config{
		Nodes: nodes, Topology: &top, History: benchHistory, Interval: benchInterval,
		Send: func(source.NodeID, ...string) {}, Now: func() time.Time { return benchEpoch },
	})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	for _, n := range nodes {
		m, _ = m.Update(ui.EventMsg{Node: n.ID, Kind: source.EventConnected, At: benchEpoch,
			Identity: &source.Identity{Addr: n.Addr, ServerName: "redis", Version: "7.0.15", Role: "master", Local: true}})
	}
	var off time.Duration
	for off = 0; off <= benchHistory+10*time.Second; off += benchInterval {
		m, _ = m.Update(fleetBatch(srvs, off))
	}
	if want := fmt.Sprintf("cluster: %d nodes in %d shards", 2*shards, shards); !strings.Contains(m.View(), want) {
		b.Fatalf("not the fleet view:\n%s", m.View())
	}
	return m, srvs, off
}

// fleetBatch is one sample of every node.
func fleetBatch(srvs []*benchServer, off time.Duration) ui.EventsMsg {
	evs := make(ui.EventsMsg, len(srvs))
	for i, s := range srvs {
		evs[i] = s.sample(off)
	}
	return evs
}

// BenchmarkFrameFleet is one frame of the fleet view of six nodes at
// 200x50, as at defaults: a sample of every node, folded and drawn, then
// View. The README's Performance section reports it beside BenchmarkFrame
// (two full panes).
func BenchmarkFrameFleet(b *testing.B) { benchFleetFrames(b, 3) }

// BenchmarkFrameFleet100 is the same with a hundred nodes (fifty shards),
// issue 21's fleet: a frame at 200x50 within 2 ms. Only the rows on screen
// are drawn, but every node's sample is folded.
func BenchmarkFrameFleet100(b *testing.B) { benchFleetFrames(b, 50) }

func benchFleetFrames(b *testing.B, shards int) {
	m, srvs, off := benchFleet(b, shards)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		off += benchInterval
		m, _ = m.Update(fleetBatch(srvs, off))
		if len(m.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}

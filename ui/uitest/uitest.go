// Package uitest is the UI tests' fake servers and timelines: smooth
// made-up curves, no randomness, so that goldens are stable. Only the
// tests of ui and of its view packages import it.
package uitest

import (
	"fmt"
	"math"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/vkwatch/vkwatch/source"
)

// Plain pins the colour profile and the background, so that goldens hold
// plain text whatever terminal or NO_COLOR setting the tests run under:
// every package's TestMain calls it.
func Plain() {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
}

// Fixed points of the fake timeline: its offset 0 and the clock a model
// is given.
var (
	Epoch    = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	FixedNow = func() time.Time { return Epoch.Add(90 * time.Second) }
)

// The fake servers' addresses, their sampling interval, and a mebibyte.
const (
	AddrA = "127.0.0.1:7001"
	AddrB = "127.0.0.1:7002"
	Tick  = 200 * time.Millisecond
	MiB   = 1 << 20
)

// Fake produces a deterministic event stream for one server: smooth
// made-up curves, no randomness, so goldens are stable.
type Fake struct {
	idx     int
	valkey  bool
	Seq     uint64
	Save    *source.SaveProgress
	saveKey int64 // keys processed so far in the running save
	base    source.Sample
	// absent drops most optional fields, as an old server would.
	Absent bool
}

// NewFake returns fake server idx (0: AddrA, 1: AddrB), a Valkey 9.2 or a Redis 7.0.
func NewFake(idx int, valkey bool) *Fake {
	return &Fake{idx: idx, valkey: valkey}
}

func (f *Fake) at(off time.Duration) (time.Duration, time.Time) { return off, Epoch.Add(off) }

// Connected is the server's EventConnected at off.
func (f *Fake) Connected(off time.Duration) source.Event {
	id := &source.Identity{Addr: []string{AddrA, AddrB}[f.idx], ServerName: "redis", Version: "7.0.15", Role: "master", Local: true}
	if f.valkey {
		id.ServerName, id.Version = "valkey", "9.2.0"
	}
	o, at := f.at(off)
	return source.Event{Node: NodeOf(f.idx), Kind: source.EventConnected, Offset: o, At: at, Identity: id}
}

// Disconnected is the server's EventDisconnected at off.
func (f *Fake) Disconnected(off time.Duration, why string) source.Event {
	o, at := f.at(off)
	return source.Event{Node: NodeOf(f.idx), Kind: source.EventDisconnected, Offset: o, At: at, Err: why}
}

// Sample builds the sample at offset off.
func (f *Fake) Sample(off time.Duration) *source.Sample {
	f.Seq++
	x := off.Seconds()
	used := int64(100*MiB + 8*MiB*math.Sin(x/7))
	rss := used + 12*MiB
	ops := 50000 + 8000*math.Sin(x/5)
	ping := time.Duration(120+60*math.Sin(x/3)) * time.Microsecond
	s := &source.Sample{
		Seq:    f.Seq,
		Offset: off,
		At:     Epoch.Add(off),
		Info: source.Info{
			Version:    "7.0.15",
			Role:       "master",
			UsedMemory: source.Some(used),
			RSS:        source.Some(rss),
			CurrentCOW: source.Some[int64](0),
		},
		OpsPerSec: source.Some(ops),
		Ping:      source.Latency{Count: 40, Min: ping / 2, P50: ping, P99: ping * 2, Max: ping * 3},
		Ping10s:   source.Latency{Count: 2000, Min: 40 * time.Microsecond, P50: 130 * time.Microsecond, P99: 410 * time.Microsecond, Max: 2100 * time.Microsecond},
		Proc:      source.ProcMem{RSS: source.Some(rss + MiB), PSS: source.Some(rss)},
		COW:       source.Some[int64](0), COWFrom: source.FromProc,
		Footprint: source.Some(rss + MiB), FootprintFrom: source.FromProc,
	}
	if f.idx == 0 {
		s.Proc.Cgroup = "v2:/system.slice/redis.service"
		s.Proc.CgroupUsage = source.Some(rss + 40*MiB)
		s.Proc.CgroupLimit = source.Some[int64](512 * MiB)
	}
	if f.valkey {
		s.Info.ServerName, s.Info.Version = "valkey", "9.2.0"
		s.Config = source.SaveConfig{Method: "forkless", ForklessInfra: source.Some(true)}
		s.WriterOpsPerSec = source.Some(ops / 10)
	} else {
		// Redis 7 has no forkless settings: CONFIG GET answers nothing for them.
		s.Config = source.SaveConfig{}
	}
	if f.Save != nil {
		elapsed := off - f.Save.Started
		f.saveKey = min(int64(elapsed/Tick)*2000, 100000)
		sv := *f.Save
		sv.Elapsed = elapsed
		sv.Processed = source.Some(f.saveKey)
		sv.Total = source.Some[int64](100000)
		if f.saveKey > 0 {
			rate := float64(f.saveKey) / elapsed.Seconds()
			sv.ETA = source.Some(time.Duration(float64(100000-f.saveKey) / rate * float64(time.Second)))
		}
		if sv.Kind == source.SaveForkless {
			sv.LiveCOW = source.Some[int64](0)
		} else {
			sv.LiveCOW = source.Some(int64(elapsed/Tick) * 256 * 1024)
			s.Proc.ChildPID = source.Some[int64](4242)
			s.Proc.ChildPrivateDirty = sv.LiveCOW
		}
		s.Info.CurrentCOW = sv.LiveCOW
		// /proc reads the child's dirty pages every sample, a little
		// ahead of INFO's figure.
		s.COW = source.Some(sv.LiveCOW.V + sv.LiveCOW.V/16)
		s.Footprint = source.Some(s.Proc.RSS.V + s.COW.V)
		if sv.Kind != source.SaveForkless {
			s.Proc.ChildPrivateDirty = s.COW
		}
		s.Save = &sv
		// The save hurts: slower commands, a worse PING.
		s.OpsPerSec = source.Some(ops * 0.7)
		s.Ping.Max *= 4
		s.Info.RSS = source.Some(rss + sv.LiveCOW.V)
	}
	if f.Absent {
		s.Info = source.Info{Version: "2.8.24", Role: "master", UsedMemory: source.Some(used)}
		s.Config = source.SaveConfig{}
		s.OpsPerSec = source.Opt[float64]{}
		s.WriterOpsPerSec = source.Opt[float64]{}
		s.Ping = source.Latency{}
		s.Ping10s = source.Latency{}
		s.Proc = source.ProcMem{}
		s.COW, s.COWFrom = source.Opt[int64]{}, ""
		s.Footprint, s.FootprintFrom = source.Opt[int64]{}, ""
	}
	return s
}

// SampleEvent is the sample at off as an event.
func (f *Fake) SampleEvent(off time.Duration) source.Event {
	s := f.Sample(off)
	return source.Event{Node: NodeOf(f.idx), Kind: source.EventSample, Offset: off, At: s.At, Sample: s}
}

// StartSave makes the samples from off on show a save running; Run emits
// the EventSaveStarted with the first of them, as the watcher does.
func (f *Fake) StartSave(off time.Duration, kind source.SaveKind) {
	trig := source.Trigger{Kind: source.TriggerUser}
	if kind == source.SaveForkless {
		trig = source.Trigger{Kind: source.TriggerSchedule, Detail: "save 60 10000"}
	}
	f.Save = &source.SaveProgress{Kind: kind, Trigger: trig, Started: off}
}

// EndSave ends the running save at off and returns the EventSaveEnded.
func (f *Fake) EndSave(off time.Duration) source.Event {
	sv := f.Save
	f.Save = nil
	r := &source.SaveReport{
		Node: NodeOf(f.idx), Addr: []string{AddrA, AddrB}[f.idx], Kind: sv.Kind, Trigger: sv.Trigger, Status: "ok",
		Started: sv.Started, Ended: off, StartedAt: Epoch.Add(sv.Started),
		Observed:      off - sv.Started,
		ServerSeconds: source.Some(int64((off - sv.Started) / time.Second)),
		COW:           source.Some[int64](17 * MiB), COWFrom: source.FromRDBLastCOW, PeakLiveCOW: source.Some[int64](18 * MiB),
		BaseUsed: source.Some[int64](100 * MiB), BaseRSS: source.Some[int64](112 * MiB),
		PeakUsedDelta: source.Some[int64](3 * MiB), PeakRSSDelta: source.Some[int64](19 * MiB),
		OpsBefore: source.Some(51234.0), OpsDuring: source.Some(36011.0),
		PeakChildPrivateDirty: source.Some[int64](18 * MiB),
		PeakCOW:               source.Some[int64](18 * MiB), PeakAtProgress: source.Some(0.62),
		PeakFootprintDelta: source.Some[int64](20 * MiB),
		PingBefore:         source.Latency{Count: 500, P50: 120 * time.Microsecond, P99: 400 * time.Microsecond, Max: 900 * time.Microsecond},
		PingDuring:         source.Latency{Count: 700, P50: 180 * time.Microsecond, P99: 2 * time.Millisecond, Max: 31 * time.Millisecond},
	}
	r.BlockedBefore, r.BlockedDuring, r.BlockedAfter = source.Some[int64](0), source.Some[int64](0), source.Some[int64](0)
	if sv.Kind != source.SaveForkless {
		r.ForkPause = source.Some(1200 * time.Microsecond)
	} else {
		// No child: none of a fork save's figures (the tracker's rule).
		r.PeakCOW, r.PeakAtProgress = source.Some[int64](0), source.Opt[float64]{}
		r.COW, r.COWFrom, r.PeakLiveCOW, r.PeakChildPrivateDirty = source.Some[int64](0), source.FromNoChild, source.Some[int64](0), source.Opt[int64]{}
		r.BlockedDuring = source.Some[int64](3)
	}
	return source.Event{Node: NodeOf(f.idx), Kind: source.EventSaveEnded, Offset: off, At: Epoch.Add(off), Report: r}
}

// Script is a timeline: events to send at each tick.
type Script struct {
	Events []source.Event
}

// Add adds events to the timeline.
func (s *Script) Add(evs ...source.Event) { s.Events = append(s.Events, evs...) }

// Run samples every tick from 'from' to 'to' (inclusive of from), calling
// hook before each sample so a test can start or end saves in between.
func (s *Script) Run(f *Fake, from, to time.Duration, hook func(off time.Duration)) {
	for off := from; off < to; off += Tick {
		if hook != nil {
			hook(off)
		}
		ev := f.SampleEvent(off)
		s.Add(ev)
		if sv := ev.Sample.Save; sv != nil && sv.Started == off {
			s.Add(source.Event{Node: NodeOf(f.idx), Kind: source.EventSaveStarted, Offset: off, At: ev.At, Sample: ev.Sample})
		}
	}
}

// Span is a save a script runs, from start to end (an end at or past the
// script's end: still running there).
type Span struct{ Start, End time.Duration }

// Scripted scripts f: connected at 0, a sample every tick until until, and
// saves of kind over spans.
func Scripted(f *Fake, until time.Duration, kind source.SaveKind, spans ...Span) []source.Event {
	var s Script
	s.Add(f.Connected(0))
	s.Run(f, 0, until, func(off time.Duration) {
		for _, sp := range spans {
			switch off {
			case sp.Start:
				f.StartSave(off, kind)
			case sp.End:
				s.Add(f.EndSave(off))
			}
		}
	})
	return s.Events
}

// Scenario builds the standard timeline: both servers connect at 0; server
// A runs a fork BGSAVE from 20s to 35s; server B a forkless save from 50s
// that is still running at the end (60s).
func Scenario(servers int, until time.Duration) []source.Event {
	a := Scripted(NewFake(0, false), until, source.SaveFork, Span{20 * time.Second, 35 * time.Second})
	if servers < 2 {
		return a
	}
	return Interleave(a, Scripted(NewFake(1, true), until, source.SaveForkless, Span{50 * time.Second, until}))
}

// Interleave merges two time-ordered event lists by offset.
func Interleave(a, b []source.Event) []source.Event {
	out := make([]source.Event, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && a[0].Offset <= b[0].Offset) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// NodeOf is the node id of the fake server at position i.
func NodeOf(i int) source.NodeID { return source.NodeID([]string{AddrA, AddrB}[i]) }

// ReportsScenario is the two-server scenario up to 60 s followed by n more
// saves, alternately on each server, 5 s apart: fork saves on the first,
// forkless saves and AOF rewrites on the second, every sixth one failed.
// The last of them lacks every optional field, as an old server would.
func ReportsScenario(n int) []source.Event {
	evs := Scenario(2, 60*time.Second)
	for i := range n {
		srv := i % 2
		end := 60*time.Second + time.Duration(i+1)*5*time.Second
		f := NewFake(srv, srv == 1)
		kind := source.SaveFork
		if srv == 1 {
			kind = []source.SaveKind{source.SaveForkless, source.SaveAOF}[(i/2)%2]
		}
		f.StartSave(end-time.Duration(2+i%4)*time.Second, kind)
		ev := f.EndSave(end)
		r := ev.Report
		r.COW = source.Some(int64(i+1) * 3 * MiB)
		r.PeakLiveCOW = source.Some(int64(i+2) * 3 * MiB)
		r.PeakProcRSSDelta = source.Some(int64(i+1) * 5 * MiB)
		if kind == source.SaveForkless { // no child: nothing to copy
			r.COW, r.PeakLiveCOW, r.PeakChildPrivateDirty = source.Some[int64](0), source.Some[int64](0), source.Opt[int64]{}
		}
		if srv == 1 {
			r.WriterOpsBefore, r.WriterOpsDuring = source.Some(5100.0), source.Some(float64(4000+100*i))
		}
		if i%6 == 5 {
			r.Status = "err"
		}
		if i == n-1 {
			*r = source.SaveReport{Node: NodeOf(srv), Addr: r.Addr, Kind: kind, Started: r.Started, Ended: r.Ended, Observed: r.Observed}
		}
		evs = append(evs, ev)
	}
	return evs
}

// TwoSaves: server A saves by fork twice (10-20 s, 40-52 s), server B
// once forkless (30-45 s), with COW and footprint growing as they go.
func TwoSaves() []source.Event {
	a := Scripted(NewFake(0, false), 60*time.Second, source.SaveFork,
		Span{10 * time.Second, 20 * time.Second}, Span{40 * time.Second, 52 * time.Second})
	b := Scripted(NewFake(1, true), 60*time.Second, source.SaveForkless, Span{30 * time.Second, 45 * time.Second})
	return Interleave(a, b)
}

// A fake fleet for the fleet view's tests: a cluster of three shards, a
// primary and a replica each, whose nodes make the fake server's smooth
// curves at their own size and load, so that the rows differ and sort.

// FleetNode is one fake cluster node.
type FleetNode struct {
	Fake
	id    source.NodeID
	addr  string
	scale float64 // memory and load against the fake server's
}

// FleetAddr is the address of fake node i (1-based).
func FleetAddr(i int) string { return fmt.Sprintf("127.0.0.1:%d", 30000+i) }

// FleetID is the cluster node id of fake node i.
func FleetID(i int) source.NodeID { return source.NodeID(fmt.Sprintf("%040x", 0xa0+i)) }

// FleetTopo is the fake cluster: shard s (1..3) has primary node s and
// replica node s+3, as redis-cli --cluster create lays six nodes out.
func FleetTopo() source.Topology {
	top := source.Topology{Cluster: true, Via: "CLUSTER SHARDS", From: FleetAddr(1), PingInterval: 6 * time.Millisecond}
	slots := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for s := 1; s <= 3; s++ {
		p, r := s, s+3
		top.Shards = append(top.Shards, source.Shard{
			Slots: []source.SlotRange{{Start: slots[s-1][0], End: slots[s-1][1]}},
			Nodes: []source.TopologyNode{
				{ID: FleetID(p), Addr: FleetAddr(p), IP: "127.0.0.1", Role: source.RolePrimary, Health: source.HealthOnline},
				{ID: FleetID(r), Addr: FleetAddr(r), IP: "127.0.0.1", Role: source.RoleReplica, Health: source.HealthOnline, Primary: FleetID(p)},
			}})
	}
	return top
}

// NewFleetNode returns fake node i (1-based) of the fake cluster.
func NewFleetNode(i int) *FleetNode {
	return &FleetNode{Fake: Fake{idx: 1}, id: FleetID(i), addr: FleetAddr(i), scale: 0.5 + float64(i)/4}
}

// Connected is the node's EventConnected at off, in role.
func (n *FleetNode) Connected(off time.Duration, role string) source.Event {
	return source.Event{Node: n.id, Kind: source.EventConnected, Offset: off, At: Epoch.Add(off),
		Identity: &source.Identity{Addr: n.addr, ServerName: "redis", Version: "7.0.15", Role: role, Local: true, Cluster: true}}
}

// SampleEvent is the node's sample at off, in role, scaled to its size.
func (n *FleetNode) SampleEvent(off time.Duration, role string) source.Event {
	s := n.Sample(off)
	s.Info.Role = role
	k := n.scale
	sc := func(o *source.Opt[int64]) {
		if o.OK {
			o.V = int64(float64(o.V) * k)
		}
	}
	sc(&s.Info.UsedMemory)
	sc(&s.Info.RSS)
	sc(&s.Proc.RSS)
	sc(&s.Footprint)
	if s.OpsPerSec.OK {
		s.OpsPerSec.V *= k
	}
	s.Ping10s.P99 = time.Duration(float64(s.Ping10s.P99) * k)
	return source.Event{Node: n.id, Kind: source.EventSample, Offset: off, At: s.At, Sample: s}
}

// SampleEventFor is a sample of another node id (one that joined later).
func (n *FleetNode) SampleEventFor(id source.NodeID, off time.Duration) source.Event {
	ev := n.SampleEvent(off, "slave")
	ev.Node = id
	return ev
}

// EndSaveEvent ends the node's running save at off.
func (n *FleetNode) EndSaveEvent(off time.Duration) source.Event {
	ev := n.EndSave(off)
	ev.Node, ev.Report.Node, ev.Report.Addr = n.id, n.id, n.addr
	return ev
}

// FleetScenario is the fake cluster from 0 to until: node 5 (a replica)
// saved from 10 s to 25 s; node 4 (a replica) runs a fork save from 52 s;
// node 6 went down at 45 s.
func FleetScenario(until time.Duration) []source.Event {
	top := FleetTopo()
	evs := []source.Event{{Kind: source.EventTopology, Topology: &top}}
	var per [][]source.Event
	for i := 1; i <= 6; i++ {
		n := NewFleetNode(i)
		role := map[bool]string{true: "master", false: "slave"}[i <= 3]
		var s []source.Event
		s = append(s, n.Connected(0, role))
		for off := time.Duration(0); off < until; off += Tick {
			switch {
			case i == 5 && off == 10*time.Second, i == 4 && off == 52*time.Second:
				n.StartSave(off, source.SaveFork)
				n.Save.Trigger = source.Trigger{Kind: source.TriggerUser}
			case i == 5 && off == 25*time.Second:
				s = append(s, n.EndSaveEvent(off))
			case i == 6 && off == 45*time.Second:
				s = append(s, source.Event{Node: n.id, Kind: source.EventDisconnected, Offset: off, At: Epoch.Add(off),
					Err: "dial tcp 127.0.0.1:30006: connect: connection refused"})
			}
			if i == 6 && off >= 45*time.Second {
				continue
			}
			ev := n.SampleEvent(off, role)
			s = append(s, ev)
			if sv := ev.Sample.Save; sv != nil && sv.Started == off {
				s = append(s, source.Event{Node: n.id, Kind: source.EventSaveStarted, Offset: off, At: ev.At, Sample: ev.Sample})
			}
		}
		per = append(per, s)
	}
	merged := per[0]
	for _, s := range per[1:] {
		merged = Interleave(merged, s)
	}
	return append(evs, merged...)
}

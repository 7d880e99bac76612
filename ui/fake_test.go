package ui

import (
	"math"
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/vkwatch/vkwatch/source"
)

// TestMain pins the colour profile and background so goldens hold plain
// text whatever terminal or NO_COLOR setting the tests run under.
func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(m.Run())
}

// Fixed points of the fake timeline.
var (
	epoch    = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	fixedNow = func() time.Time { return epoch.Add(90 * time.Second) }
)

const (
	addrA = "127.0.0.1:7001"
	addrB = "127.0.0.1:7002"
	tick  = 200 * time.Millisecond
	mib   = 1 << 20
)

// fakeServer produces a deterministic event stream for one server: smooth
// made-up curves, no randomness, so goldens are stable.
type fakeServer struct {
	idx     int
	valkey  bool
	seq     uint64
	save    *source.SaveProgress
	saveKey int64 // keys processed so far in the running save
	base    source.Sample
	// absent drops most optional fields, as an old server would.
	absent bool
}

func newFake(idx int, valkey bool) *fakeServer {
	return &fakeServer{idx: idx, valkey: valkey}
}

func (f *fakeServer) at(off time.Duration) (time.Duration, time.Time) { return off, epoch.Add(off) }

func (f *fakeServer) connected(off time.Duration) source.Event {
	id := &source.Identity{Addr: []string{addrA, addrB}[f.idx], ServerName: "redis", Version: "7.0.15", Role: "master", Local: true}
	if f.valkey {
		id.ServerName, id.Version = "valkey", "9.2.0"
	}
	o, at := f.at(off)
	return source.Event{Node: nodeOf(f.idx), Kind: source.EventConnected, Offset: o, At: at, Identity: id}
}

func (f *fakeServer) disconnected(off time.Duration, why string) source.Event {
	o, at := f.at(off)
	return source.Event{Node: nodeOf(f.idx), Kind: source.EventDisconnected, Offset: o, At: at, Err: why}
}

// sample builds the sample at offset off.
func (f *fakeServer) sample(off time.Duration) *source.Sample {
	f.seq++
	x := off.Seconds()
	used := int64(100*mib + 8*mib*math.Sin(x/7))
	rss := used + 12*mib
	ops := 50000 + 8000*math.Sin(x/5)
	ping := time.Duration(120+60*math.Sin(x/3)) * time.Microsecond
	s := &source.Sample{
		Seq:    f.seq,
		Offset: off,
		At:     epoch.Add(off),
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
		Proc:      source.ProcMem{RSS: source.Some(rss + mib), PSS: source.Some(rss)},
		COW:       source.Some[int64](0), COWFrom: source.FromProc,
		Footprint: source.Some(rss + mib), FootprintFrom: source.FromProc,
	}
	if f.idx == 0 {
		s.Proc.Cgroup = "v2:/system.slice/redis.service"
		s.Proc.CgroupUsage = source.Some(rss + 40*mib)
		s.Proc.CgroupLimit = source.Some[int64](512 * mib)
	}
	if f.valkey {
		s.Info.ServerName, s.Info.Version = "valkey", "9.2.0"
		s.Config = source.SaveConfig{Method: "forkless", ForklessInfra: source.Some(true)}
		s.WriterOpsPerSec = source.Some(ops / 10)
	} else {
		// Redis 7 has no forkless settings: CONFIG GET answers nothing for them.
		s.Config = source.SaveConfig{}
	}
	if f.save != nil {
		elapsed := off - f.save.Started
		f.saveKey = min(int64(elapsed/tick)*2000, 100000)
		sv := *f.save
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
			sv.LiveCOW = source.Some(int64(elapsed/tick) * 256 * 1024)
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
	if f.absent {
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

func (f *fakeServer) sampleEvent(off time.Duration) source.Event {
	s := f.sample(off)
	return source.Event{Node: nodeOf(f.idx), Kind: source.EventSample, Offset: off, At: s.At, Sample: s}
}

// startSave makes the samples from off on show a save running; run emits
// the EventSaveStarted with the first of them, as the watcher does.
func (f *fakeServer) startSave(off time.Duration, kind source.SaveKind) {
	trig := source.Trigger{Kind: source.TriggerUser}
	if kind == source.SaveForkless {
		trig = source.Trigger{Kind: source.TriggerSchedule, Detail: "save 60 10000"}
	}
	f.save = &source.SaveProgress{Kind: kind, Trigger: trig, Started: off}
}

// endSave ends the running save at off and returns the EventSaveEnded.
func (f *fakeServer) endSave(off time.Duration) source.Event {
	sv := f.save
	f.save = nil
	r := &source.SaveReport{
		Node: nodeOf(f.idx), Addr: []string{addrA, addrB}[f.idx], Kind: sv.Kind, Trigger: sv.Trigger, Status: "ok",
		Started: sv.Started, Ended: off, StartedAt: epoch.Add(sv.Started),
		Observed:      off - sv.Started,
		ServerSeconds: source.Some(int64((off - sv.Started) / time.Second)),
		COW:           source.Some[int64](17 * mib), COWFrom: source.FromRDBLastCOW, PeakLiveCOW: source.Some[int64](18 * mib),
		BaseUsed: source.Some[int64](100 * mib), BaseRSS: source.Some[int64](112 * mib),
		PeakUsedDelta: source.Some[int64](3 * mib), PeakRSSDelta: source.Some[int64](19 * mib),
		OpsBefore: source.Some(51234.0), OpsDuring: source.Some(36011.0),
		PeakChildPrivateDirty: source.Some[int64](18 * mib),
		PeakCOW:               source.Some[int64](18 * mib), PeakAtProgress: source.Some(0.62),
		PeakFootprintDelta: source.Some[int64](20 * mib),
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
	return source.Event{Node: nodeOf(f.idx), Kind: source.EventSaveEnded, Offset: off, At: epoch.Add(off), Report: r}
}

// script is a timeline: events to send at each tick.
type script struct {
	events []source.Event
}

func (s *script) add(evs ...source.Event) { s.events = append(s.events, evs...) }

// run samples every tick from 'from' to 'to' (inclusive of from), calling
// hook before each sample so a test can start or end saves in between.
func (s *script) run(f *fakeServer, from, to time.Duration, hook func(off time.Duration)) {
	for off := from; off < to; off += tick {
		if hook != nil {
			hook(off)
		}
		ev := f.sampleEvent(off)
		s.add(ev)
		if sv := ev.Sample.Save; sv != nil && sv.Started == off {
			s.add(source.Event{Node: nodeOf(f.idx), Kind: source.EventSaveStarted, Offset: off, At: ev.At, Sample: ev.Sample})
		}
	}
}

// feed sends the events to m in batches, as the wiring coalesces them.
func feed(t testing.TB, m Model, evs []source.Event) Model {
	t.Helper()
	const batch = 10
	for i := 0; i < len(evs); i += batch {
		j := min(i+batch, len(evs))
		nm, _ := m.Update(EventsMsg(evs[i:j]))
		m = nm.(Model)
	}
	return m
}

// sized returns m after a window-size message.
func sized(m Model, w, h int) Model {
	nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return nm.(Model)
}

// keyTypes are the keys press sends by name; any other string is typed.
var keyTypes = map[string]tea.KeyType{
	"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "ctrl+c": tea.KeyCtrlC, "esc": tea.KeyEsc,
	"up": tea.KeyUp, "down": tea.KeyDown, "enter": tea.KeyEnter,
}

// press returns m after a key press, and the command it returned.
func press(m Model, k string) (Model, tea.Cmd) {
	msg := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	if kt, ok := keyTypes[k]; ok {
		msg = tea.KeyMsg{Type: kt}
	}
	nm, cmd := m.Update(msg)
	return nm.(Model), cmd
}

// span is a save a script runs, from start to end (an end at or past the
// script's end: still running there).
type span struct{ start, end time.Duration }

// scripted scripts f: connected at 0, a sample every tick until until, and
// saves of kind over spans.
func scripted(f *fakeServer, until time.Duration, kind source.SaveKind, spans ...span) []source.Event {
	var s script
	s.add(f.connected(0))
	s.run(f, 0, until, func(off time.Duration) {
		for _, sp := range spans {
			switch off {
			case sp.start:
				f.startSave(off, kind)
			case sp.end:
				s.add(f.endSave(off))
			}
		}
	})
	return s.events
}

// scenario builds the standard timeline: both servers connect at 0; server
// A runs a fork BGSAVE from 20s to 35s; server B a forkless save from 50s
// that is still running at the end (60s).
func scenario(servers int, until time.Duration) []source.Event {
	a := scripted(newFake(0, false), until, source.SaveFork, span{20 * time.Second, 35 * time.Second})
	if servers < 2 {
		return a
	}
	return interleave(a, scripted(newFake(1, true), until, source.SaveForkless, span{50 * time.Second, until}))
}

// interleave merges two time-ordered event lists by offset.
func interleave(a, b []source.Event) []source.Event {
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

func newTestModel(servers ...string) Model {
	return New(Config{Nodes: nodes(servers...), Now: fixedNow, Send: func(source.NodeID, ...string) {}})
}

package fleet

import (
	"slices"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// Attention follows the save. A node that saves, or is about to, is
// probed at MinPingInterval, finely enough to catch its fork pause; the
// others share what is left of the PING budget. "About to" is a BGSAVE or
// BGREWRITEAOF sent through Do and not yet seen running, an AOF rewrite
// the server has scheduled, a primary with a replica waiting for a full
// sync (it forks next), and whatever the caller names with Expect (a
// rolling save's next node). A --ping-interval holds for every node: the
// user's interval is never changed.
//
// INFO follows the save too when the fleet has an IdleInterval: a node at
// rest is sampled that often, one in attention every Watch.Interval. A
// save nobody announced (a save point, another client's BGSAVE) is then
// first seen by a sample at rest, up to IdleInterval after it began
// rather than up to Watch.Interval; its fork is timed by the PINGs as
// before (every 2 ms for up to 2 nodes, whatever the samples do).
//
// The reasons by node are kept apart by where they come from, so that a
// sample saying "no save" does not undo an Expect, nor an Expect withdrawn
// undo a save that runs.
type attention struct {
	seen     map[source.NodeID]string // from the latest sample
	sent     map[source.NodeID]string // a save command sent, not yet seen running and ended
	sentAt   map[source.NodeID]time.Duration
	expected map[source.NodeID]string // Expect's
}

// sentFor is how long a save command keeps its node in attention without
// a sample seeing the save run: a save too short for any sample to see
// ends its attention here.
const sentFor = 3 * time.Second

func newAttention() attention {
	return attention{seen: map[source.NodeID]string{}, sent: map[source.NodeID]string{},
		sentAt: map[source.NodeID]time.Duration{}, expected: map[source.NodeID]string{}}
}

// reason is why node is probed finely, empty when it is not.
func (a *attention) reason(node source.NodeID) string {
	for _, m := range []map[source.NodeID]string{a.seen, a.sent, a.expected} {
		if r := m[node]; r != "" {
			return r
		}
	}
	return ""
}

// minColdShare is the least part of the budget the nodes out of attention
// keep, however many nodes save at once: they are probed coarsely, never
// not at all.
const minColdShare = 4

// coldInterval is the PING interval of the nodes out of attention when hot
// of nodes are probed at MinPingInterval: max(2 ms, (nodes - hot) / (what
// the hot leave of the budget)), the hot leaving at least a quarter.
func coldInterval(nodes, hot, budget int) time.Duration {
	if budget <= 0 {
		budget = DefaultPingBudget
	}
	if hot <= 0 {
		return PingInterval(nodes, budget)
	}
	left := budget - hot*int(time.Second/MinPingInterval)
	left = max(left, budget/minColdShare, 1)
	return PingInterval(max(nodes-hot, 0), left)
}

// sampleReason is what a sample says about a node's coming or running
// save: empty when nothing.
func sampleReason(s *source.Sample) string {
	in := &s.Info
	switch {
	case s.Save != nil:
		return "saving"
	case in.RDBInProgress.V == 1 || in.AOFRewriteInProgress.V == 1:
		return "saving"
	case in.AOFRewriteScheduled.V == 1:
		return "AOF rewrite scheduled"
	case in.ReplicasWaitingBGSave > 0:
		return "replica waiting for a full sync"
	}
	return ""
}

// saveCommand reports whether args start a save or rewrite.
func saveCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch strings.ToUpper(args[0]) {
	case "BGSAVE", "BGREWRITEAOF":
		return len(args) == 1 || !strings.EqualFold(args[1], "CANCEL")
	}
	return false
}

// attend notes what ev says about its node's save and sets the PING
// intervals anew when that changes who is in attention.
func (f *Fleet) attend(ev source.Event) {
	if !f.attentive() {
		return
	}
	f.mu.Lock()
	a := &f.att
	before := a.reason(ev.Node)
	switch ev.Kind {
	case source.EventSample, source.EventSaveStarted:
		if ev.Sample == nil {
			break
		}
		r := sampleReason(ev.Sample)
		if r != "" {
			a.seen[ev.Node] = r
		} else {
			delete(a.seen, ev.Node)
		}
		if r == "saving" || ev.Offset-a.sentAt[ev.Node] > sentFor {
			delete(a.sent, ev.Node) // seen running (the samples say it from now on), or never
		}
	case source.EventSaveEnded:
		delete(a.sent, ev.Node)
	case source.EventDisconnected:
		delete(a.seen, ev.Node)
	case source.EventCommand:
		if c := ev.Command; c != nil && !c.OK() {
			delete(a.sent, ev.Node) // refused: nothing is coming
		}
	}
	changed := a.reason(ev.Node) != before
	var top source.Topology
	if changed {
		changed = f.retimeLocked()
		top = f.topo
	}
	running := f.runCtx != nil
	f.mu.Unlock()
	if changed && running {
		f.emitTopology(top)
	}
}

// Expect names the nodes about to save (a rolling save's next ones), to be
// probed finely from now until the next Expect; Expect() with none
// withdraws them. why is what the header says ("next in the roll").
func (f *Fleet) Expect(why string, nodes ...source.NodeID) {
	if !f.attentive() {
		return
	}
	f.mu.Lock()
	clear(f.att.expected)
	for _, n := range nodes {
		f.att.expected[n] = why
	}
	f.retimeUnlock()
}

// sending notes a save command about to be sent to node.
func (f *Fleet) sending(node source.NodeID, args []string) {
	if !saveCommand(args) || !f.attentive() {
		return
	}
	f.mu.Lock()
	f.att.sent[node] = strings.ToUpper(args[0]) + " sent"
	f.att.sentAt[node] = f.clock.Offset()
	f.retimeUnlock()
}

// fixedInterval: the user's --ping-interval holds for every node.
func (f *Fleet) fixedInterval() bool { return f.cfg.Watch.PingInterval > 0 }

// restSampling is the INFO sampling interval of the nodes at rest.
func (f *Fleet) restSampling() time.Duration { return time.Duration(f.restIvl.Load()) }

// restSamplingFor is the INFO sampling interval of the nodes at rest in a
// fleet of n: --idle-interval (or --interval), longer where the sample
// budget calls for it.
func (f *Fleet) restSamplingFor(n int) time.Duration {
	least := f.cfg.Watch.Interval
	if f.cfg.IdleInterval > 0 {
		least = f.cfg.IdleInterval
	}
	return SampleInterval(n, f.cfg.SampleBudget, least)
}

// attentive: attention moves some interval, the PINGs' or the samples'.
func (f *Fleet) attentive() bool {
	return !f.fixedInterval() || f.restSampling() > f.cfg.Watch.Interval
}

// samplingOfLocked is the INFO sampling interval id's attention calls for.
func (f *Fleet) samplingOfLocked(id source.NodeID) time.Duration {
	if f.att.reason(id) != "" {
		return f.cfg.Watch.Interval
	}
	return f.restSampling() * time.Duration(f.slowOfLocked(id))
}

// retimeUnlock retimes the watchers (retimeLocked), releases f.mu, which
// the caller holds, and tells a running fleet's listener of the new
// intervals, outside the lock.
func (f *Fleet) retimeUnlock() {
	changed := f.retimeLocked()
	top := f.topo
	running := f.runCtx != nil
	f.mu.Unlock()
	if changed && running {
		f.emitTopology(top)
	}
}

// retimeLocked gives every watcher the intervals its attention calls for
// (PING and INFO) and puts them in the topology; it reports whether the
// topology changed.
func (f *Fleet) retimeLocked() bool {
	if !f.attentive() && len(f.slow) == 0 {
		return false
	}
	var hot []source.Attended
	for id := range f.watchers {
		if r := f.att.reason(id); r != "" {
			hot = append(hot, source.Attended{Node: id, Addr: f.members[id].Endpoint.String(), Reason: r})
		}
	}
	slices.SortFunc(hot, func(a, b source.Attended) int { return strings.Compare(string(a.Node), string(b.Node)) })
	cold, fine := f.cfg.Watch.PingInterval, f.cfg.Watch.PingInterval
	if !f.fixedInterval() {
		cold, fine = coldInterval(len(f.watchers), len(hot), f.cfg.PingBudget), MinPingInterval
	}
	for id, r := range f.watchers {
		ping := cold * time.Duration(f.slowOfLocked(id))
		if f.att.reason(id) != "" {
			ping = fine
		}
		if r.interval != ping {
			r.interval = ping
			r.w.SetPingInterval(ping)
		}
		r.w.SetInterval(f.samplingOfLocked(id)) // nothing when unchanged
	}
	for i := range hot {
		hot[i].Interval = fine
	}
	slow := f.throttledLocked(cold)
	changed := cold != f.topo.PingInterval || !slices.Equal(hot, f.topo.Attention) || !slices.Equal(slow, f.topo.Throttled)
	f.topo.PingInterval, f.topo.Attention, f.topo.Throttled = cold, hot, slow
	return changed
}

// intervalOfLocked is the interval a new watcher of id starts at.
func (f *Fleet) intervalOfLocked(id source.NodeID) time.Duration {
	if !f.fixedInterval() && f.att.reason(id) != "" {
		return MinPingInterval
	}
	return f.topo.PingInterval
}

// Package saves follows a server's background saves through its samples
// (Tracker): when one starts and ends, its progress and cost curve, who
// started it (trigger.go), and its report. It is pure logic over source's
// types, kept apart from the watcher that feeds it live, so that a
// recording's samples, replayed, give the same reports.
package saves

import (
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

const (
	// beforeWindow is how far back before a save OpsBefore, WriterOpsBefore
	// and PingBefore look.
	beforeWindow = 5 * time.Second
	// etaAlpha weighs a new rate against the smoothed one. Progress moves
	// in ~1 s steps observed with the sampling jitter of one interval; 0.3
	// halves a step's error within two steps and keeps the ETA steady.
	etaAlpha = 0.3
)

// Tracker turns a server's samples into save progress and save
// reports. It is pure logic, deterministic over the samples it is given:
// the watcher runs one per server, and bench and replay reuse it on
// recorded samples.
type Tracker struct {
	node source.NodeID
	addr string

	prev *source.Sample // the previous sample
	// justEnded is set on the sample that ended a save: the next sample
	// must not read a late update of the last-save fields as another save.
	justEnded bool
	recent    []windowPoint // samples of the last beforeWindow, oldest first
	run       *saveRun      // the save running now, nil when none

	// cancelled is set when the server accepted a BGSAVE CANCEL of a
	// running save: the save that ends next is reported as cancelled.
	cancelled bool
	// pending is an accepted BGSAVE or BGREWRITEAOF whose save has not
	// been seen yet: the next save of its kind is the user's (see
	// ObserveCommand and dropStale).
	pending *pendingCommand
}

// pendingCommand is a command the server accepted to start a save.
type pendingCommand struct {
	aof     bool // BGREWRITEAOF, else BGSAVE
	command string
	done    time.Duration // when its answer came
}

// windowPoint is what a sample contributes to before/during means.
type windowPoint struct {
	off    time.Duration
	ops    source.Opt[float64]
	writer source.Opt[float64]
	ping   source.Latency
}

func pointOf(s *source.Sample) windowPoint {
	return windowPoint{off: s.Offset, ops: s.OpsPerSec, writer: s.WriterOpsPerSec, ping: s.Ping}
}

// saveRun is the state of one running save.
type saveRun struct {
	kind      source.SaveKind
	started   time.Duration
	startedAt time.Time

	baseUsed, baseRSS, baseProcRSS source.Opt[int64]
	peakUsed, peakRSS, peakProcRSS source.Opt[int64]
	peakLiveCOW, peakChildDirty    source.Opt[int64]

	before []windowPoint
	during []windowPoint

	trigger source.Trigger
	// The instruments (Sample.COW, Sample.Footprint) over the save.
	peakCOW      source.Opt[int64]
	peakCOWFrom  source.Instrument
	peakAt       source.Opt[float64]
	keysTotal    source.Opt[int64]
	baseFoot     source.Opt[int64] // Footprint of the sample before the save
	baseFootFrom source.Instrument
	peakFoot     source.Opt[int64] // of the samples by baseFootFrom's instrument
	forkPause    source.Opt[time.Duration]
	curve        []source.CurvePoint

	// Progress and ETA: the rate is taken between distinct progress
	// values (the server updates them about once a second) and smoothed.
	initVal  int64 // the first value seen
	haveInit bool
	lastVal  int64 // the value at the last change, seen at lastAt
	lastAt   time.Duration
	haveLast bool
	rate     float64 // keys per second, smoothed; 0: none yet
}

// NewTracker returns a tracker for node at addr (both carried into its
// reports).
func NewTracker(node source.NodeID, addr string) *Tracker {
	return &Tracker{node: node, addr: addr}
}

// ObserveCommand takes the answer to a command vkwatch sent this server, in
// order with the samples: the watcher hands every answer to the tracker
// before the next sample, and the same order is in a recording, so a replay
// derives the same reports.
//
// A BGSAVE CANCEL that the server accepted ("Background saving cancelled",
// Valkey 8.1+) makes the running save end as StatusCancelled rather than
// the "err" the server reports for a killed child. "Scheduled background
// saving cancelled" cancels a save that never started: nothing to report.
//
// An accepted BGSAVE or BGREWRITEAOF makes the next save of its kind the
// user's (TriggerUser). The server forks before it answers, so the answer
// can come after a sample that already shows the save running: a save
// running now that a sample first showed after the command was sent, and
// whose trigger is not the user's yet, becomes the user's.
func (t *Tracker) ObserveCommand(c *source.CommandResult) {
	if c == nil || !c.OK() {
		return
	}
	if isCancel(c.Command) && strings.HasPrefix(c.Reply, "Background saving cancelled") {
		t.cancelled = true
		return
	}
	aof, ok := startsSave(c)
	if !ok {
		return
	}
	if r := t.run; r != nil && (r.kind == source.SaveAOF) == aof && r.started >= c.Sent && r.trigger.Kind != source.TriggerUser {
		r.trigger = source.Trigger{Kind: source.TriggerUser, Detail: c.Command}
		return
	}
	t.pending = &pendingCommand{aof: aof, command: c.Command, done: c.Done}
}

// startsSave reports whether c is an accepted command that starts (or
// schedules) a save, and whether that is an AOF rewrite.
func startsSave(c *source.CommandResult) (aof, ok bool) {
	f := strings.Fields(strings.ToUpper(c.Command))
	if len(f) == 0 || !(strings.HasSuffix(c.Reply, "started") || strings.HasSuffix(c.Reply, "scheduled")) {
		return false, false
	}
	switch f[0] {
	case "BGSAVE":
		return false, true
	case "BGREWRITEAOF":
		return true, true
	}
	return false, false
}

// isCancel reports whether command is BGSAVE CANCEL.
func isCancel(command string) bool {
	f := strings.Fields(strings.ToUpper(command))
	return len(f) == 2 && f[0] == "BGSAVE" && f[1] == "CANCEL"
}

// Observe takes the next sample in order and fills its derived figures:
// the instruments (source.Derive) and, while a save or AOF rewrite runs,
// s.Save. It is the one function that derives them, live in the watcher
// and again in a recording's reader, which records none of them. It and reports whether one started with this sample and
// the report of one that ended with it. A save that started and ended
// between two samples (rdb_saves or total_forks grew, or
// rdb_last_bgsave_time_sec changed) is still reported, with Observed 0.
// When the server restarted (uptime dropped or a new process id) a running
// save ends with Status "lost (server restarted)".
func (t *Tracker) Observe(s *source.Sample) (started bool, ended *source.SaveReport) {
	source.Derive(s)
	in := &s.Info
	prev := t.prev
	restart := prev != nil && source.Restarted(&prev.Info, in)
	t.prev = s

	kind, running := source.SaveKindOf(in)
	justEnded := t.justEnded
	t.justEnded = false
	if t.run != nil && (restart || !running || kind != t.run.kind || prev != nil && anotherJob(t.run.kind, &prev.Info, in)) {
		ended = t.finish(s, restart)
		t.justEnded = true
	} else if t.run == nil && !running && prev != nil && !restart {
		ended = t.missed(prev, s, justEnded)
	}
	if running && t.run == nil && !restart {
		t.start(kind, prev, s)
		started = true
	} else if running && t.run == nil && restart {
		// A save already running on a restarted server: track it, with
		// no baseline from the old process.
		t.recent = t.recent[:0]
		t.start(kind, nil, s)
		started = true
	}
	if t.run != nil {
		t.progress(s)
	} else {
		t.remember(s)
	}
	t.dropStale(s, ended != nil)
	return started, ended
}

// anotherJob reports whether the counters show that a job of kind ended
// and a new one began between two samples that both show one running (a
// replica's full sync right after a user's save, say).
func anotherJob(kind source.SaveKind, a, b *source.Info) bool {
	switch kind {
	case source.SaveFork:
		return grew(a.RDBSaves, b.RDBSaves) || grew(a.TotalForks, b.TotalForks)
	case source.SaveForkless:
		// An AOF rewrite may fork beside a forkless save: forks say nothing.
		return grew(a.RDBSaves, b.RDBSaves)
	case source.SaveAOF:
		return grew(a.AOFRewrites, b.AOFRewrites) || grew(a.TotalForks, b.TotalForks)
	case source.SaveSlotMigration:
		return grew(a.TotalForks, b.TotalForks)
	}
	return false
}

// dropStale forgets a pending command that no save came of: the first
// sample taken after its answer shows no job running, none scheduled and
// none ended. (A started save shows in that sample; a scheduled one waits
// behind the job that runs.)
func (t *Tracker) dropStale(s *source.Sample, ended bool) {
	pc := t.pending
	if pc == nil || s.Offset <= pc.done || ended {
		return
	}
	if _, running := source.SaveKindOf(&s.Info); running || s.Info.AOFRewriteScheduled.V == 1 {
		return
	}
	t.pending = nil
}

// remember keeps a sample taken while no save runs for the next save's
// "before" figures.
func (t *Tracker) remember(s *source.Sample) {
	t.recent = append(t.recent, pointOf(s))
	cut := 0
	for cut < len(t.recent) && t.recent[cut].off < s.Offset-beforeWindow {
		cut++
	}
	if cut > 0 {
		t.recent = append(t.recent[:0], t.recent[cut:]...)
	}
}

func (t *Tracker) start(kind source.SaveKind, prev, s *source.Sample) {
	r := &saveRun{kind: kind, started: s.Offset, startedAt: s.At}
	if prev != nil {
		r.baseUsed, r.baseRSS, r.baseProcRSS = prev.Info.UsedMemory, prev.Info.RSS, prev.Proc.RSS
		r.baseFoot, r.baseFootFrom = prev.Footprint, prev.FootprintFrom
		r.forkPause = forkPause(kind, &prev.Info, &s.Info)
	}
	r.trigger = t.triggerOf(kind, prev, s, false)
	r.before = append([]windowPoint(nil), t.recent...)
	t.run = r
}

// forkPause is latest_fork_usec in b when it is the fork of the save of
// kind that b is the first sample to show (or that ran between a and b):
// total_forks grew by exactly one since a, so the last fork is this
// save's. Without total_forks (before 6.2) a changed latest_fork_usec is
// taken as a new fork. Absent forkless (no fork), when a second fork may
// have come between, or when nothing shows that a fork happened: the field
// would then hold an older fork's pause.
func forkPause(kind source.SaveKind, a, b *source.Info) source.Opt[time.Duration] {
	usec, ok := b.LatestForkUsec.Get()
	if kind == source.SaveForkless || !ok || usec < 0 {
		return source.Opt[time.Duration]{}
	}
	switch {
	case a.TotalForks.OK && b.TotalForks.OK:
		if b.TotalForks.V != a.TotalForks.V+1 {
			return source.Opt[time.Duration]{}
		}
	case !a.LatestForkUsec.OK || a.LatestForkUsec.V == usec:
		return source.Opt[time.Duration]{}
	}
	return source.Some(time.Duration(usec) * time.Microsecond)
}

// progress updates the running save with s and sets s.Save.
func (t *Tracker) progress(s *source.Sample) {
	r := t.run
	in := &s.Info
	r.during = append(r.during, pointOf(s))
	r.peakUsed = maxOpt(r.peakUsed, in.UsedMemory)
	r.peakRSS = maxOpt(r.peakRSS, in.RSS)
	r.peakProcRSS = maxOpt(r.peakProcRSS, s.Proc.RSS)
	r.peakChildDirty = maxOpt(r.peakChildDirty, s.Proc.ChildPrivateDirty)
	r.peakLiveCOW = maxOpt(r.peakLiveCOW, in.CurrentCOW)
	r.peakLiveCOW = maxOpt(r.peakLiveCOW, in.CurrentCOWPeak)

	p := &source.SaveProgress{
		Kind:      r.kind,
		Trigger:   r.trigger,
		Started:   r.started,
		Elapsed:   s.Offset - r.started,
		Processed: in.KeysProcessed,
		Total:     in.KeysTotal,
		LiveCOW:   in.CurrentCOW,
	}
	if v, ok := in.KeysProcessed.Get(); ok {
		switch {
		case !r.haveInit:
			r.initVal, r.haveInit = v, true
		case !r.haveLast:
			// The first change is only an anchor: the save started at
			// an unknown time before the first sample, and the first
			// report of a fork child can be as small as one key.
			if v != r.initVal {
				r.lastVal, r.lastAt, r.haveLast = v, s.Offset, true
			}
		case v != r.lastVal && s.Offset > r.lastAt:
			inst := float64(v-r.lastVal) / (s.Offset - r.lastAt).Seconds()
			if inst > 0 {
				if r.rate == 0 {
					r.rate = inst
				} else {
					r.rate = etaAlpha*inst + (1-etaAlpha)*r.rate
				}
			}
			r.lastVal, r.lastAt = v, s.Offset
		}
	}
	if eta, ok := in.ForklessETA.Get(); ok && eta >= 0 {
		p.ETA = source.Some(time.Duration(eta) * time.Second)
	} else if total, ok := in.KeysTotal.Get(); ok && r.rate > 0 && r.haveLast {
		// Between two progress steps the keys done keep growing at the
		// rate; counting the time since the last step down keeps the ETA
		// moving smoothly instead of standing still and jumping.
		left := float64(total-r.lastVal)/r.rate - (s.Offset - r.lastAt).Seconds()
		p.ETA = source.Some(time.Duration(max(left, 0) * float64(time.Second)))
	}
	s.Save = p

	frac := p.Fraction()
	if c, ok := s.COW.Get(); ok && (!r.peakCOW.OK || c > r.peakCOW.V) {
		r.peakCOW, r.peakAt, r.peakCOWFrom = s.COW, frac, s.COWFrom
	}
	if in.KeysTotal.OK {
		r.keysTotal = in.KeysTotal
	}
	// A delta between two instruments would measure their difference, not
	// the save: only samples read like the baseline count.
	if r.baseFoot.OK && s.FootprintFrom == r.baseFootFrom {
		r.peakFoot = maxOpt(r.peakFoot, s.Footprint)
	}
	if pt, ok := CurvePointOf(s); ok {
		r.curve = append(r.curve, pt)
	}
	// The one copy of the curve: the history store reads it from here.
	p.SetCurve(r.curve)
}

// CurvePointOf is the point of its save's cost curve a sample makes: what
// the save had cost at the sample's progress. False when the sample shows
// no save, or not its progress. The tracker's curves are made of these
// points, and the history store's when it replays a recording, which
// holds no curve.
func CurvePointOf(s *source.Sample) (source.CurvePoint, bool) {
	if s.Save == nil {
		return source.CurvePoint{}, false
	}
	f, ok := s.Save.Fraction().Get()
	if !ok {
		return source.CurvePoint{}, false
	}
	return source.CurvePoint{Progress: f, Elapsed: s.Save.Elapsed, COW: s.COW, Footprint: s.Footprint}, true
}

// finish ends the running save with sample s, the first sample that no
// longer shows it.
func (t *Tracker) finish(s *source.Sample, restart bool) *source.SaveReport {
	r := t.run
	t.run = nil
	rep := t.report(r.kind, s)
	rep.Started, rep.StartedAt = r.started, r.startedAt
	rep.Observed = rep.Ended - rep.Started
	if restart {
		rep.Status = source.StatusLost
		rep.ServerSeconds, rep.COW = source.Opt[int64]{}, source.Opt[int64]{}
	}
	rep.Trigger = r.trigger
	rep.PeakCOW, rep.PeakAtProgress, rep.PeakCOWFrom = r.peakCOW, r.peakAt, r.peakCOWFrom
	rep.KeysTotal = r.keysTotal
	rep.PeakFootprintDelta = deltaOpt(r.peakFoot, r.baseFoot)
	rep.ForkPause = r.forkPause
	rep.Curve = r.curve
	rep.PeakLiveCOW = r.peakLiveCOW
	if rep.PeakLiveCOW.OK && rep.PeakLiveCOW.V == 0 && rep.COW.V > 0 {
		// current_cow_size never refreshed during the save (a save of
		// about a second or less): its 0 is no reading.
		rep.PeakLiveCOW = source.Opt[int64]{}
	}
	rep.BaseUsed, rep.BaseRSS = r.baseUsed, r.baseRSS
	rep.PeakUsedDelta = deltaOpt(r.peakUsed, r.baseUsed)
	rep.PeakRSSDelta = deltaOpt(r.peakRSS, r.baseRSS)
	rep.PeakProcRSSDelta = deltaOpt(r.peakProcRSS, r.baseProcRSS)
	rep.PeakChildPrivateDirty = r.peakChildDirty
	rep.OpsBefore, rep.WriterOpsBefore, rep.PingBefore = summarize(r.before)
	rep.OpsDuring, rep.WriterOpsDuring, rep.PingDuring = summarize(r.during)
	return rep
}

// missed reports a save that ran entirely between prev and s, if the
// counters show one.
func (t *Tracker) missed(prev, s *source.Sample, justEnded bool) *source.SaveReport {
	a, b := &prev.Info, &s.Info
	changed := func(x, y source.Opt[int64]) bool { return !justEnded && x.OK && y.OK && y.V != x.V }
	var kind source.SaveKind
	switch {
	case grew(a.RDBSaves, b.RDBSaves) || changed(a.RDBLastTime, b.RDBLastTime):
		kind = source.SaveFork
		if b.RDBLastType == "forkless" {
			kind = source.SaveForkless
		}
	case changed(a.AOFLastRewriteTime, b.AOFLastRewriteTime):
		kind = source.SaveAOF
	case grew(a.TotalForks, b.TotalForks):
		kind = source.SaveFork
	default:
		return nil
	}
	rep := t.report(kind, s)
	rep.Trigger = t.triggerOf(kind, prev, s, true)
	rep.ForkPause = forkPause(kind, a, b)
	rep.Started, rep.StartedAt = s.Offset, s.At
	rep.BaseUsed, rep.BaseRSS = a.UsedMemory, a.RSS
	rep.OpsBefore, rep.WriterOpsBefore, rep.PingBefore = summarize(t.recent)
	return rep
}

// grew reports whether a counter read in both samples went up.
func grew(x, y source.Opt[int64]) bool { return x.OK && y.OK && y.V > x.V }

// report fills what the end sample s says about the last save of kind; an
// RDB save the server confirmed cancelling is "cancelled", whatever its
// rdb_last_bgsave_status says. The cancel is forgotten with every report.
func (t *Tracker) report(kind source.SaveKind, s *source.Sample) *source.SaveReport {
	in := &s.Info
	rep := &source.SaveReport{Node: t.node, Addr: t.addr, Kind: kind, Ended: s.Offset}
	nonNeg := func(o source.Opt[int64]) source.Opt[int64] {
		if o.OK && o.V < 0 {
			return source.Opt[int64]{}
		}
		return o
	}
	switch kind {
	case source.SaveSlotMigration:
		// INFO keeps no last status or copy-on-write of a slot
		// migration's child (CLUSTER GETSLOTMIGRATIONS has its
		// cow_size): the live figures the samples saw are the report's.
	case source.SaveAOF:
		rep.Status = in.AOFLastStatus
		rep.ServerSeconds = nonNeg(in.AOFLastRewriteTime)
		rep.COW = in.AOFLastCOW
	default:
		rep.Status = in.RDBLastStatus
		rep.ServerSeconds = nonNeg(in.RDBLastTime)
		rep.COW = in.RDBLastCOW
		if t.cancelled {
			rep.Status = source.StatusCancelled
		}
	}
	t.cancelled = false
	return rep
}

// summarize means the ops rates and merges the latencies of points.
func summarize(ps []windowPoint) (ops, writer source.Opt[float64], ping source.Latency) {
	var sumO, sumW float64
	var nO, nW int
	lats := make([]source.Latency, 0, len(ps))
	for _, p := range ps {
		if p.ops.OK {
			sumO += p.ops.V
			nO++
		}
		if p.writer.OK {
			sumW += p.writer.V
			nW++
		}
		lats = append(lats, p.ping)
	}
	if nO > 0 {
		ops = source.Some(sumO / float64(nO))
	}
	if nW > 0 {
		writer = source.Some(sumW / float64(nW))
	}
	return ops, writer, mergeLatencies(lats)
}

// mergeLatencies combines per-interval summaries. Count, Min, Max and
// InFlight are exact (sum, min, max, max). The percentiles are an
// approximation, since only each interval's summary is known: each
// interval stands for a distribution spread evenly over [Min, P50] (half
// its PINGs), [P50, P99] (49 %) and [P99, Max] (1 %), and the merged P50
// and P99 are the quantiles of the count-weighted mixture of those. When
// all intervals look alike this gives back their own P50 and P99; a
// stalled interval moves them only by its share of the PINGs.
func mergeLatencies(ls []source.Latency) source.Latency {
	var out source.Latency
	var total float64
	for _, l := range ls {
		out.InFlight = max(out.InFlight, l.InFlight)
		out.Interval = max(out.Interval, l.Interval)
		if l.Count <= 0 {
			continue
		}
		out.Count += l.Count
		if out.Min == 0 || l.Min < out.Min {
			out.Min = l.Min
		}
		out.Max = max(out.Max, l.Max)
		total += float64(l.Count)
	}
	if total == 0 {
		return out
	}
	// below is how many PINGs of the mixture are <= x.
	below := func(x time.Duration) float64 {
		var n float64
		for _, l := range ls {
			if l.Count <= 0 {
				continue
			}
			f := 0.5*spread(x, l.Min, l.P50) + 0.49*spread(x, l.P50, l.P99) + 0.01*spread(x, l.P99, l.Max)
			n += f * float64(l.Count)
		}
		return n
	}
	// The smallest x holding a fraction q: bisection over nanoseconds.
	at := func(q float64) time.Duration {
		need := q*total - 1e-9*total
		lo, hi := out.Min, out.Max
		for lo < hi {
			mid := lo + (hi-lo)/2
			if below(mid) >= need {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo
	}
	out.P50, out.P99 = at(0.5), at(0.99)
	return out
}

// spread is the fraction of a segment spread evenly over [lo, hi] that is
// <= x (a point mass when lo == hi).
func spread(x, lo, hi time.Duration) float64 {
	switch {
	case x >= hi:
		return 1
	case x < lo:
		return 0
	}
	return float64(x-lo) / float64(hi-lo)
}

func maxOpt(a, b source.Opt[int64]) source.Opt[int64] {
	if !b.OK {
		return a
	}
	if !a.OK || b.V > a.V {
		return b
	}
	return a
}

func deltaOpt(peak, base source.Opt[int64]) source.Opt[int64] {
	if !peak.OK || !base.OK {
		return source.Opt[int64]{}
	}
	return source.Some(peak.V - base.V)
}

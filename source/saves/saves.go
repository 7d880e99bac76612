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
	// spikes are the spikes observed lately (ObserveSpike), oldest
	// first: a report names its worst PING's.
	spikes []source.Spike
}

// keepSpikes bounds the spikes a tracker keeps: more than a save's
// samples can hold in the window between a spike and its report.
const keepSpikes = 16

// ObserveSpike takes a spike of this server (package spike), in order
// with the samples: the watcher hands each to the tracker before the
// sample it follows, and a recording keeps that order, so that a save's
// report names its worst PING's causes live and replayed alike
// (SaveReport.WorstSpike).
func (t *Tracker) ObserveSpike(sp *source.Spike) {
	if sp == nil {
		return
	}
	if len(t.spikes) == keepSpikes {
		t.spikes = append(t.spikes[:0], t.spikes[1:]...)
	}
	t.spikes = append(t.spikes, *sp)
}

// spikeOf is the spike whose PING took ping, sent after from; nil when
// that PING broke no rule. A PING's round trip is exact to the
// nanosecond, so it names its spike.
func (t *Tracker) spikeOf(ping, from time.Duration) *source.Spike {
	for i := len(t.spikes) - 1; i >= 0; i-- {
		if sp := t.spikes[i]; sp.Ping == ping && sp.Sent >= from && ping > 0 {
			return &sp
		}
	}
	return nil
}

// pendingCommand is a command the server accepted to start a save.
type pendingCommand struct {
	aof        bool // BGREWRITEAOF, else BGSAVE
	command    string
	sent, done time.Duration // when it went out, when its answer came
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
	// from is the sample before the save's first: its PINGs were sent
	// after it.
	from time.Duration

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

	// base is the last-save fields as the save began, and lastChanges
	// rdb_changes_since_last_save in the latest sample showing it: its
	// end is judged against them (rdbVerdict).
	base        lastFields
	lastChanges source.Opt[int64]
	// seenETA: the server gave a forkless ETA (0 or more) during the
	// save; a -1 after it is the tail, not the start.
	seenETA bool
	// blocked_clients before the save and its peak during it.
	blockedBefore, blockedPeak source.Opt[int64]
	methodNote                 string

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

// Seen reports whether the tracker has observed a sample.
func (t *Tracker) Seen() bool { return t.prev != nil }

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
	t.pending = &pendingCommand{aof: aof, command: c.Command, sent: c.Sent, done: c.Done}
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
	if t.run != nil && (restart || !running || !sameJob(t.run.kind, kind) || prev != nil && anotherJob(t.run.kind, &prev.Info, in)) {
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
	if t.run == nil && ended == nil {
		// A cancel answered while nothing this tracker can see ran (a
		// scheduled save, a save already over): it ends nothing later.
		t.cancelled = false
	}
	return started, ended
}

// sameJob reports whether a job the tracker follows as kind is still the
// one INFO shows running as now: SaveKindOf calls a forkless sync a
// forkless save (both are rdb_bgsave_in_progress of type forkless).
func sameJob(kind, now source.SaveKind) bool {
	return kind == now || kind == source.SaveForklessSync && now == source.SaveForkless
}

// forklessSync tells a replica's full sync served without a fork from a
// forkless BGSAVE, which INFO shows alike (rdb_bgsave_in_progress 1,
// rdb_current_bgsave_type forkless): a BGSAVE counts in rdb_saves as it
// starts and a sync does not. Without the sample before, a sync is known
// by keys sent with no total (current_save_keys_total 0).
func forklessSync(prev, s *source.Sample) bool {
	in := &s.Info
	if prev != nil && prev.Info.RDBSaves.OK && in.RDBSaves.OK {
		return in.RDBSaves.V == prev.Info.RDBSaves.V
	}
	return in.KeysTotal.OK && in.KeysTotal.V == 0 && in.KeysProcessed.V > 0
}

// anotherJob reports whether the counters show that a job of kind ended
// and a new one began between two samples that both show one running (a
// replica's full sync right after a user's save, say).
func anotherJob(kind source.SaveKind, a, b *source.Info) bool {
	switch kind {
	case source.SaveFork:
		return grew(a.RDBSaves, b.RDBSaves) || grew(a.TotalForks, b.TotalForks)
	case source.SaveForkless, source.SaveForklessSync:
		// A forkless save forks nothing, so total_forks says nothing of
		// it: an atomic slot migration may fork beside it. (An AOF
		// rewrite does not: it waits, aof_rewrite_scheduled, until the
		// save ends.) A new BGSAVE counts in rdb_saves as it starts.
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
	if kind == source.SaveForkless && forklessSync(prev, s) {
		kind = source.SaveForklessSync
	}
	r := &saveRun{kind: kind, started: s.Offset, startedAt: s.At}
	if prev != nil {
		r.from = prev.Offset
		r.baseUsed, r.baseRSS, r.baseProcRSS = prev.Info.UsedMemory, prev.Info.RSS, prev.Proc.RSS
		r.baseFoot, r.baseFootFrom = prev.Footprint, prev.FootprintFrom
		r.forkPause = forkPause(kind, &prev.Info, &s.Info)
		r.base, r.blockedBefore = lastOf(&prev.Info, true), prev.Info.BlockedClients
	} else {
		// The first sample vkwatch took: the save began before it, and
		// its last-save fields are still the last save's.
		r.base = lastOf(&s.Info, false)
	}
	if kind == source.SaveFork && source.ForcedFork(s) {
		r.methodNote = "forked, though bgsave-default-method is forkless (rdb_current_bgsave_type fork): " +
			"the server falls back to a fork when a loaded module cannot save forklessly"
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
	r.blockedPeak = maxOpt(r.blockedPeak, in.BlockedClients)
	r.lastChanges = in.RDBChangesSinceSave

	p := &source.SaveProgress{
		Kind:      r.kind,
		Trigger:   r.trigger,
		Started:   r.started,
		Elapsed:   s.Offset - r.started,
		Processed: in.KeysProcessed,
		Total:     in.KeysTotal,
		LiveCOW:   in.CurrentCOW,
	}
	if r.kind == source.SaveForklessSync {
		// A sync has no key total: its 0 is none.
		p.Total = source.Opt[int64]{}
	}
	r.step(in.KeysProcessed, s.Offset)
	p.ETA, p.Phase = t.etaOf(r, in, s.Offset)
	s.Save = p

	frac := p.Fraction()
	if c, ok := s.COW.Get(); ok && (!r.peakCOW.OK || c > r.peakCOW.V) {
		r.peakCOW, r.peakAt, r.peakCOWFrom = s.COW, frac, s.COWFrom
	}
	if p.Total.OK {
		r.keysTotal = p.Total
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

// step takes keys processed at off into the save's smoothed rate, taken
// between distinct values (the server updates them about once a second).
func (r *saveRun) step(processed source.Opt[int64], off time.Duration) {
	v, ok := processed.Get()
	switch {
	case !ok:
	case !r.haveInit:
		r.initVal, r.haveInit = v, true
	case !r.haveLast:
		// The first change is only an anchor: the save started at an
		// unknown time before the first sample, and the first report of
		// a fork child can be as small as one key.
		if v != r.initVal {
			r.lastVal, r.lastAt, r.haveLast = v, off, true
		}
	case v != r.lastVal && off > r.lastAt:
		inst := float64(v-r.lastVal) / (off - r.lastAt).Seconds()
		if inst > 0 {
			if r.rate == 0 {
				r.rate = inst
			} else {
				r.rate = etaAlpha*inst + (1-etaAlpha)*r.rate
			}
		}
		r.lastVal, r.lastAt = v, off
	}
}

// etaOf is the running save's ETA at off or, where it has none, the
// phase it is in (source.PhaseStarting, ...). Never a negative ETA.
//
// A forkless save's ETA is the server's own
// (forkless_estimated_seconds_remaining): -1 before the first key and
// again in the tail, after the last key, while the file is fsynced and
// renamed. A -1 once the save had an ETA, or had processed keys, is the
// tail. A fork save's ETA is derived from the rate of its keys processed;
// at N/N keys it is in the tail. A sync has no total and no ETA.
func (t *Tracker) etaOf(r *saveRun, in *source.Info, off time.Duration) (source.Opt[time.Duration], string) {
	var none source.Opt[time.Duration]
	if t.cancelled && r.kind != source.SaveAOF {
		return none, source.PhaseCancelling
	}
	switch r.kind {
	case source.SaveForklessSync:
		return none, ""
	case source.SaveForkless:
		if eta, ok := in.ForklessETA.Get(); ok {
			switch {
			case eta >= 0:
				r.seenETA = true
				return source.Some(time.Duration(eta) * time.Second), ""
			case r.seenETA || in.KeysProcessed.V > 0:
				return none, source.PhaseFinishing
			}
			return none, source.PhaseStarting
		}
	}
	total, ok := in.KeysTotal.Get()
	switch {
	case !ok || total <= 0:
		return none, ""
	case in.KeysProcessed.OK && in.KeysProcessed.V >= total:
		return none, source.PhaseFinishing
	case r.rate > 0 && r.haveLast:
		// Between two progress steps the keys done keep growing at the
		// rate; counting the time since the last step down keeps the ETA
		// moving smoothly instead of standing still and jumping.
		left := float64(total-r.lastVal)/r.rate - (off - r.lastAt).Seconds()
		return source.Some(time.Duration(max(left, 0) * float64(time.Second))), ""
	}
	return none, ""
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
	rep := t.report(r.kind, s, r.base, r.lastChanges)
	rep.Started, rep.StartedAt = r.started, r.startedAt
	rep.Observed = rep.Ended - rep.Started
	if restart {
		rep.Status, rep.Evidence = source.StatusLost, "uptime_in_seconds went back or process_id changed: the server restarted"
		rep.ServerSeconds = source.Opt[int64]{}
		if rep.COWFrom != source.FromNoChild {
			rep.COW, rep.COWFrom = source.Opt[int64]{}, ""
		}
	}
	rep.Trigger, rep.MethodNote = r.trigger, r.methodNote
	rep.PeakCOW, rep.PeakAtProgress, rep.PeakCOWFrom = r.peakCOW, r.peakAt, r.peakCOWFrom
	rep.KeysTotal = r.keysTotal
	rep.PeakFootprintDelta = deltaOpt(r.peakFoot, r.baseFoot)
	if rep.PeakFootprintDelta.OK {
		rep.PeakFootprintFrom = r.baseFootFrom
	}
	if !restart {
		settle(rep, s, r.baseFootFrom, baseRSS(r.baseFootFrom, r.baseRSS, r.baseProcRSS))
	}
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
	rep.WorstSpike = t.spikeOf(rep.PingDuring.Max, r.from)
	rep.BlockedBefore, rep.BlockedDuring, rep.BlockedAfter = r.blockedBefore, r.blockedPeak, s.Info.BlockedClients
	return rep
}

// missed reports a save that ran entirely between prev and s, if the
// counters show one. rdb_saves growing says a BGSAVE began (a forkless one
// counts as it starts, a fork one as it forks), total_forks growing with
// it that it forked; rdb_last_bgsave_time_sec changing without rdb_saves
// is an RDB job that was no BGSAVE: a replica's sync, forkless when
// nothing forked.
func (t *Tracker) missed(prev, s *source.Sample, justEnded bool) *source.SaveReport {
	a, b := &prev.Info, &s.Info
	changed := func(x, y source.Opt[int64]) bool { return !justEnded && x.OK && y.OK && y.V != x.V }
	forked := grew(a.TotalForks, b.TotalForks)
	forksKnown := a.TotalForks.OK && b.TotalForks.OK
	var kind source.SaveKind
	switch {
	case grew(a.RDBSaves, b.RDBSaves):
		kind = source.SaveFork
		if forksKnown && !forked || !forksKnown && b.RDBLastType == "forkless" {
			kind = source.SaveForkless
		}
	case changed(a.RDBLastTime, b.RDBLastTime):
		kind = source.SaveFork
		if a.RDBSaves.OK && b.RDBSaves.OK && forksKnown && !forked {
			kind = source.SaveForklessSync
		} else if b.RDBLastType == "forkless" {
			kind = source.SaveForkless
		}
	case changed(a.AOFLastRewriteTime, b.AOFLastRewriteTime):
		kind = source.SaveAOF
	case forked:
		kind = source.SaveFork
	default:
		return nil
	}
	rep := t.report(kind, s, lastOf(a, true), a.RDBChangesSinceSave)
	pc := t.pending
	rep.Trigger = t.triggerOf(kind, prev, s, true)
	rep.ForkPause = forkPause(kind, a, b)
	// It ran after the sample before, and after vkwatch's own command
	// when it was that: Observed is the most it can have lasted.
	rep.Started = prev.Offset
	if pc != nil && rep.Trigger.Kind == source.TriggerUser && pc.sent > rep.Started {
		rep.Started = pc.sent
	}
	rep.StartedAt = s.At.Add(rep.Started - s.Offset)
	rep.Observed, rep.ObservedUpTo = rep.Ended-rep.Started, true
	rep.BaseUsed, rep.BaseRSS = a.UsedMemory, a.RSS
	rep.OpsBefore, rep.WriterOpsBefore, rep.PingBefore = summarize(t.recent)
	// The end sample's interval held the whole save: its ops, PINGs and
	// memory are what the save was seen to cost.
	rep.OpsDuring, rep.WriterOpsDuring, rep.PingDuring = summarize([]windowPoint{pointOf(s)})
	rep.WorstSpike = t.spikeOf(rep.PingDuring.Max, prev.Offset)
	rep.PeakUsedDelta, rep.PeakRSSDelta = deltaOpt(b.UsedMemory, a.UsedMemory), deltaOpt(b.RSS, a.RSS)
	rep.PeakProcRSSDelta = deltaOpt(s.Proc.RSS, prev.Proc.RSS)
	rep.BlockedBefore, rep.BlockedAfter = a.BlockedClients, b.BlockedClients
	settle(rep, s, prev.FootprintFrom, baseRSS(prev.FootprintFrom, a.RSS, prev.Proc.RSS))
	return rep
}

// baseRSS is the RSS read before a save by the footprint's instrument:
// /proc's or INFO's.
func baseRSS(from source.Instrument, info, proc source.Opt[int64]) source.Opt[int64] {
	if from == source.FromProc {
		return proc
	}
	return info
}

// grew reports whether a counter read in both samples went up.
func grew(x, y source.Opt[int64]) bool { return x.OK && y.OK && y.V > x.V }

// report fills what the end sample s says about the last save of kind,
// which began with the last-save fields base (lastChanges: the change
// counter in the last sample that showed it running). Each last-save
// field is read only where this save set it (see verdict.go); a save
// vkwatch's BGSAVE CANCEL stopped is cancelled. The cancel is forgotten
// with every report.
func (t *Tracker) report(kind source.SaveKind, s *source.Sample, base lastFields, lastChanges source.Opt[int64]) *source.SaveReport {
	in := &s.Info
	rep := &source.SaveReport{Node: t.node, Addr: t.addr, Kind: kind, Ended: s.Offset}
	nonNeg := func(o source.Opt[int64]) source.Opt[int64] {
		if o.OK && o.V < 0 {
			return source.Opt[int64]{}
		}
		return o
	}
	// rdb_last_bgsave_time_sec where this save's end may have left it
	// as it was: only a new value is this save's.
	newTime := func() source.Opt[int64] {
		if v := nonNeg(in.RDBLastTime); v.OK && (!base.bgTime.OK || base.bgTime.V != v.V) {
			return v
		}
		return source.Opt[int64]{}
	}
	switch kind {
	case source.SaveSlotMigration:
		// INFO keeps no last status or copy-on-write of a slot
		// migration's child (CLUSTER GETSLOTMIGRATIONS has its
		// cow_size): the live figures the samples saw are the report's.
	case source.SaveAOF:
		rep.Status, rep.Evidence = in.AOFLastStatus, "aof_last_bgrewrite_status"
		rep.ServerSeconds = nonNeg(in.AOFLastRewriteTime)
		if in.AOFLastCOW.OK {
			rep.COW, rep.COWFrom = in.AOFLastCOW, source.FromAOFLastCOW
		}
	case source.SaveForklessSync:
		rep.Evidence = "a replica's full sync without a fork is no BGSAVE: the server keeps no status of it"
		rep.ServerSeconds = newTime()
		rep.COW, rep.COWFrom = source.Some[int64](0), source.FromNoChild
	default:
		rep.Status, rep.Evidence = rdbVerdict(base, lastChanges, in, t.cancelled)
		switch rep.Status {
		case source.StatusOK, source.StatusErr, source.StatusCancelled:
			rep.ServerSeconds = nonNeg(in.RDBLastTime)
		default:
			rep.ServerSeconds = newTime()
		}
		switch {
		case kind == source.SaveForkless:
			rep.COW, rep.COWFrom = source.Some[int64](0), source.FromNoChild
		case rep.Status == source.StatusOK && in.RDBLastCOW.OK:
			// The child reports its copy-on-write only when it saved.
			rep.COW, rep.COWFrom = in.RDBLastCOW, source.FromRDBLastCOW
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

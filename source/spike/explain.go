package spike

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// Explain names what took a spike's time, each cause with the evidence
// for it and how much of the spike its own count of time covers, and says
// what else it checked. It never names a cause without evidence:
//
//   - the server's own doing, from its counters between the samples
//     bounding the spike: a fork (total_forks grew; latest_fork_usec is
//     the pause), a slow command (SLOWLOG entries logged in the window,
//     by the server's clock; INFO latencystats beside them), the latency
//     monitor's events (LATENCY LATEST, where latency-monitor-threshold
//     is set), active expiry, eviction, lazy free and defrag
//     (expire_cycle_cpu_milliseconds, evicted_keys,
//     lazyfree_pending_objects, total_active_defrag_time), a write that
//     waited for fsync (aof_delayed_fsync), writers a forkless save
//     blocked (blocked_clients);
//   - the host, for a local server, from /proc of its main thread: stopped
//     (state T while the PING waited), waiting for a CPU (schedstat's run
//     delay), page faults (minflt and majflt; kernel time up to what the
//     minor faults could cost, faultCost), a sleep in the kernel (state
//     D, a wait channel);
//   - vkwatch itself: its probe read the answer late, where no kernel
//     timestamp timed it.
//
// A count that grows all the time (a cycle's CPU, the run delay) is a
// cause only when it reaches a quarter of the spike (and 1 ms); an event
// the server counts one by one (a fork, a logged command, a stop) is a
// cause whatever it covers. A slow command is not blamed when the kernel
// says the server spent the PING's wait stopped or waiting for a CPU: the
// host made it slow, and the host's cause says so.
//
// When nothing explains the spike: "not seen by the server" where every
// count the server keeps was read and saw nothing (and, for a local
// server, the kernel saw it idle or on a CPU), else "unexplained", saying
// what could not be checked.
func Explain(e *Evidence) (causes []source.SpikeCause, checked []string) {
	if e.Before == nil || e.After == nil {
		return []source.SpikeCause{{Kind: source.CauseUnexplained, What: "unexplained",
			Evidence: "no sample before the PING to compare the server's counters with"}}, nil
	}
	if source.Restarted(e.Before, e.After) {
		return []source.SpikeCause{{Kind: source.CauseUnexplained, What: "unexplained",
			Evidence: "the server restarted around the PING (uptime_in_seconds, process_id)"}}, nil
	}
	x := &explainer{e: e, h: readHost(e)}
	x.fork()
	x.commands()
	x.cycles()
	x.aof()
	x.forkless()
	x.latencyMonitor()
	x.hostCauses()
	x.vkwatch()
	x.verdict()
	order := source.CauseKinds()
	slices.SortStableFunc(x.causes, func(a, b source.SpikeCause) int {
		return cmp.Compare(slices.Index(order, a.Kind), slices.Index(order, b.Kind))
	})
	return x.causes, x.checked
}

type explainer struct {
	e       *Evidence
	h       host
	causes  []source.SpikeCause
	checked []string
	// cantSee lists what could not be checked: with no cause, the spike
	// is unexplained rather than not seen.
	cantSee []string
	// commandUnseen: a command shorter than slowlog-log-slower-than and
	// as long as the spike could have run unlogged. The kernel's view of
	// an idle server still rules it out.
	commandUnseen string
	forkPause     time.Duration
	usedLatency   map[string]bool // LATENCY LATEST events a cause cites already
	hostMade      []string        // SLOWLOG entries the host made slow
}

// significant says whether a count of time that grows all the time is a
// cause of this spike: a quarter of it, and at least a millisecond.
func (x *explainer) significant(d time.Duration) bool {
	return d >= max(time.Millisecond, x.e.Ping/4)
}

// covers is d as a part of the spike.
func (x *explainer) covers(d time.Duration) source.Opt[time.Duration] {
	return source.Some(min(max(d, 0), x.e.Ping))
}

func (x *explainer) add(k source.CauseKind, what string, covers source.Opt[time.Duration], evidence string) {
	x.causes = append(x.causes, source.SpikeCause{Kind: k, What: what, Covers: covers, Evidence: evidence})
}

func (x *explainer) check(s string) { x.checked = append(x.checked, s) }

// cause returns the first cause of kind k, nil when none.
func (x *explainer) cause(k source.CauseKind) *source.SpikeCause {
	for i := range x.causes {
		if x.causes[i].Kind == k {
			return &x.causes[i]
		}
	}
	return nil
}

// delta is how much a counter grew between the bounding samples; false
// when either lacks it, or it went back (reset).
func delta(a, b source.Opt[int64]) (int64, bool) {
	if !a.OK || !b.OK || b.V < a.V {
		return 0, false
	}
	return b.V - a.V, true
}

func plus(n int64) string { return "+" + strconv.FormatInt(n, 10) }

func (x *explainer) fork() {
	b, a := x.e.Before, x.e.After
	n, ok := delta(b.TotalForks, a.TotalForks)
	switch {
	case ok && n > 0:
		pause := time.Duration(a.LatestForkUsec.V) * time.Microsecond
		ev := "latest_fork_usec, total_forks " + plus(n)
		if n > 1 {
			ev = "latest_fork_usec of the last of " + strconv.FormatInt(n, 10) + " forks, total_forks " + plus(n)
		}
		if !a.LatestForkUsec.OK {
			x.add(source.CauseFork, "fork", source.Opt[time.Duration]{}, "total_forks "+plus(n)+", no latest_fork_usec")
			return
		}
		x.forkPause = pause
		x.add(source.CauseFork, "fork pause", x.covers(pause), ev)
	case ok:
		x.check("no fork (total_forks +0)")
	case !a.TotalForks.OK && b.LatestForkUsec.OK && a.LatestForkUsec.OK && a.LatestForkUsec.V != b.LatestForkUsec.V:
		// Before 6.2 there is no total_forks: a new pause is a new fork.
		pause := time.Duration(a.LatestForkUsec.V) * time.Microsecond
		x.forkPause = pause
		x.add(source.CauseFork, "fork pause", x.covers(pause), "latest_fork_usec changed (no total_forks before 6.2)")
	default:
		x.cantSee = append(x.cantSee, "forks (no total_forks)")
	}
}

// inWindow says whether a server time (unix seconds) falls between the
// bounding samples by the server's own clock (server_time_usec), to the
// second the server logs with; ok is false without that clock.
func (x *explainer) inWindow(t int64) (in, ok bool) {
	b, a := x.e.Before.ServerTimeUsec, x.e.After.ServerTimeUsec
	if !b.OK || !a.OK {
		return false, false
	}
	lo, hi := b.V/1_000_000, (a.V+999_999)/1_000_000
	return t >= lo && t <= hi, true
}

func (x *explainer) commands() {
	e := x.e
	thr := e.Config.SlowlogSlowerThan
	switch {
	case e.SlowLogErr != "":
		x.cantSee = append(x.cantSee, "slow commands (SLOWLOG: "+e.SlowLogErr+")")
		return
	case !e.SlowLogRead:
		x.cantSee = append(x.cantSee, "slow commands (SLOWLOG not read)")
		return
	case thr.OK && thr.V < 0:
		x.cantSee = append(x.cantSee, "slow commands (SLOWLOG off: slowlog-log-slower-than "+strconv.FormatInt(thr.V, 10)+")")
		return
	}
	var in []SlowEntry
	placed := true
	for _, s := range e.SlowLog {
		ok, clock := x.inWindow(s.Time)
		switch {
		case clock && ok:
			in = append(in, s)
		case !clock && !e.SlowLogFirst:
			// Newer than the last read, but not placed in time.
			in, placed = append(in, s), false
		case !clock:
			x.cantSee = append(x.cantSee, "slow commands (a first SLOWLOG read is placed in time by server_time_usec, which this server lacks)")
			return
		}
	}
	logs := ""
	if thr.OK {
		logs = " (logs commands of " + source.Millis(time.Duration(thr.V)*time.Microsecond) + " or more)"
	}
	if len(in) == 0 {
		x.check("SLOWLOG: nothing in the window" + logs)
		if !thr.OK || time.Duration(thr.V)*time.Microsecond >= e.Ping {
			x.commandUnseen = "a command shorter than slowlog-log-slower-than" + logs
		}
		return
	}
	slices.SortStableFunc(in, func(a, b SlowEntry) int { return cmp.Compare(b.Duration, a.Duration) })
	var rest []SlowEntry
	for i, s := range in {
		if i == maxCommands {
			rest = in[i:]
			break
		}
		if f := x.cause(source.CauseFork); f != nil && forks(s.Command) {
			// The command that forked: its logged time is the fork's.
			f.Evidence += "; started by " + s.Command + " (SLOWLOG #" + strconv.FormatInt(s.ID, 10) + from(s) +
				", logged " + source.Millis(s.Duration) + ")"
			continue
		}
		if why := x.h.madeSlow(x, s); why != "" {
			x.hostMade = append(x.hostMade, "SLOWLOG #"+strconv.FormatInt(s.ID, 10)+" "+s.Command+" "+source.Millis(s.Duration)+" "+why)
			continue
		}
		ev := "SLOWLOG #" + strconv.FormatInt(s.ID, 10) + from(s)
		if !placed {
			ev += ", placed by its id alone: no server_time_usec"
		}
		if st, ok := x.stats(s.Command); ok {
			ev += "; its p99.9 " + source.Millis(st.P999) + " (INFO latencystats)"
		}
		x.add(source.CauseCommand, s.Command, x.covers(s.Duration), ev)
	}
	if len(rest) > 0 && x.cause(source.CauseCommand) != nil {
		var sum time.Duration
		for _, s := range rest {
			sum += s.Duration
		}
		x.add(source.CauseCommand, strconv.Itoa(len(rest))+" more slow commands", x.covers(sum), "SLOWLOG")
	}
}

// maxCommands is how many slow commands a spike names one by one.
const maxCommands = 3

// from is who sent a SLOWLOG entry's command: " from ADDR (NAME)".
func from(s SlowEntry) string {
	out := ""
	if s.Client != "" {
		out += " from " + s.Client
	}
	if s.ClientName != "" {
		out += " (" + s.ClientName + ")"
	}
	return out
}

// forks says whether a command forks a child: its SLOWLOG time is the
// fork's pause (and a little).
func forks(command string) bool {
	switch command {
	case "BGSAVE", "BGREWRITEAOF", "SYNC", "PSYNC":
		return true
	}
	return false
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// cycles: the server's background work on its main thread.
func (x *explainer) cycles() {
	b, a := x.e.Before, x.e.After
	if d, ok := delta(b.ExpireCycleCPUms, a.ExpireCycleCPUms); ok {
		cpu := time.Duration(d) * time.Millisecond
		if x.significant(cpu) {
			ev := "expire_cycle_cpu_milliseconds " + plus(d)
			if k, ok := delta(b.ExpiredKeys, a.ExpiredKeys); ok {
				ev += ", expired_keys " + plus(k)
			}
			if c, ok := delta(b.ExpireCapReached, a.ExpireCapReached); ok && c > 0 {
				ev += ", expired_time_cap_reached_count " + plus(c)
			}
			x.add(source.CauseExpire, "active expiry", x.covers(cpu), ev)
		} else {
			x.check("active expiry " + plus(d) + " ms (expire_cycle_cpu_milliseconds)")
		}
	} else {
		x.cantSee = append(x.cantSee, "active expiry (no expire_cycle_cpu_milliseconds)")
	}
	if n, ok := delta(b.EvictedKeys, a.EvictedKeys); ok && n > 0 {
		ev := "evicted_keys " + plus(n)
		if over, ok := delta(b.EvictionOverMs, a.EvictionOverMs); ok {
			ev += ", total_eviction_exceeded_time " + plus(over) + " ms over maxmemory"
		}
		x.add(source.CauseEviction, "eviction", source.Opt[time.Duration]{}, ev)
	} else if ok {
		x.check("no eviction (evicted_keys +0)")
	}
	if p, q := b.LazyFreePending, a.LazyFreePending; p.OK && q.OK && q.V > p.V {
		x.add(source.CauseLazyFree, "lazy free backlog", source.Opt[time.Duration]{},
			"lazyfree_pending_objects "+strconv.FormatInt(p.V, 10)+" -> "+strconv.FormatInt(q.V, 10))
	}
	if d, ok := delta(b.DefragTimeMs, a.DefragTimeMs); ok && d > 0 {
		t := time.Duration(d) * time.Millisecond
		if x.significant(t) {
			x.add(source.CauseDefrag, "active defrag", x.covers(t), "total_active_defrag_time "+plus(d)+" ms")
		} else {
			x.check("active defrag " + plus(d) + " ms (total_active_defrag_time)")
		}
	}
}

func (x *explainer) aof() {
	b, a := x.e.Before, x.e.After
	if a.AOFEnabled.V != 1 {
		return
	}
	policy := "appendfsync " + x.e.Config.AppendFsync
	if x.e.Config.AppendFsync == "" {
		policy = "appendfsync not read"
	}
	if n, ok := delta(b.AOFDelayedFsync, a.AOFDelayedFsync); ok && n > 0 {
		x.add(source.CauseAOF, "AOF write waited for fsync", source.Opt[time.Duration]{}, "aof_delayed_fsync "+plus(n)+", "+policy)
		return
	}
	x.check("aof_delayed_fsync +0 (" + policy + ")")
	if x.e.Config.AppendFsync == "always" {
		x.check("appendfsync always: every write fsyncs on the main thread, which only the latency monitor times")
	}
}

func (x *explainer) forkless() {
	b, a := x.e.Before, x.e.After
	on := func(in *source.Info) bool { return in.RDBInProgress.V == 1 && in.RDBCurrentType == "forkless" }
	if !on(b) && !on(a) {
		return
	}
	peak := max(b.BlockedClients.Or(0), a.BlockedClients.Or(0))
	switch {
	case !b.BlockedClients.OK && !a.BlockedClients.OK:
		x.check("forkless save running; blocked_clients not read")
	case peak > 0:
		x.add(source.CauseForkless, "writers blocked by the forkless save", source.Opt[time.Duration]{},
			"blocked_clients "+strconv.FormatInt(peak, 10)+", rdb_current_bgsave_type forkless; the server keeps no time for it")
	default:
		x.check("forkless save running, no writer blocked (blocked_clients 0)")
	}
}

// latencyEvents maps the latency monitor's events to causes.
func latencyCause(event string) (source.CauseKind, string) {
	switch {
	case event == "fork":
		return source.CauseFork, "fork"
	case event == "command":
		return source.CauseCommand, "a command"
	case event == "fast-command":
		return source.CauseCommand, "a fast command"
	case event == "expire-cycle":
		return source.CauseExpire, "active expiry"
	case strings.HasPrefix(event, "eviction"):
		return source.CauseEviction, "eviction"
	case strings.HasPrefix(event, "aof"):
		return source.CauseAOF, "AOF " + strings.TrimPrefix(event, "aof-")
	case event == "active-defrag-cycle":
		return source.CauseDefrag, "active defrag"
	}
	return source.CauseLatencyEvent, event
}

func (x *explainer) latencyMonitor() {
	e := x.e
	thr := e.Config.LatencyMonitorThreshold
	switch {
	case !thr.OK:
		x.check("latency monitor: latency-monitor-threshold not read")
		return
	case thr.V <= 0:
		x.check("latency monitor off (latency-monitor-threshold 0): with it set, say to 1, the server times its fork, " +
			"expire-cycle, eviction, aof-fsync and command stalls of at least that many ms; vkwatch never sets it")
		return
	case e.LatencyErr != "":
		x.check("LATENCY LATEST not read: " + e.LatencyErr)
		return
	case !e.LatencyRead:
		x.check("LATENCY LATEST not read")
		return
	}
	found := false
	for _, ev := range e.Latency {
		if in, ok := x.inWindow(ev.Time); ok && !in {
			continue
		}
		found = true
		kind, what := latencyCause(ev.Event)
		cite := "LATENCY LATEST " + ev.Event + " " + source.Millis(ev.Latest)
		if c := x.cause(kind); c != nil && kind != source.CauseLatencyEvent {
			c.Evidence += "; " + cite
			if !c.Covers.OK {
				c.Covers = x.covers(ev.Latest)
			}
			continue
		}
		if kind == source.CauseCommand && len(x.hostMade) > 0 {
			continue // the host's, as SLOWLOG's entries are
		}
		x.add(kind, what, x.covers(ev.Latest), cite)
	}
	if !found {
		x.check("latency monitor: no event in the window (threshold " + strconv.FormatInt(thr.V, 10) + " ms)")
	}
}

func (x *explainer) hostCauses() {
	e, h := x.e, &x.h
	switch {
	case !e.Local:
		x.check("remote server: its host's /proc not read")
		return
	case !e.ProcOK:
		x.cantSee = append(x.cantSee, "the server's host (/proc not readable)")
		return
	}
	if h.stopped {
		ev := "/proc/PID/task/PID/stat state T " + h.stoppedAt
		cov := source.Opt[time.Duration]{}
		if h.stoppedFor > 0 {
			cov = x.covers(h.stoppedFor)
		}
		x.add(source.CauseStopped, "server stopped", cov, withNotes(ev, x.hostMade))
	}
	if h.waitOK && x.significant(h.wait) {
		ev := "/proc/PID/schedstat run delay +" + source.Millis(h.wait) + " " + h.waitSpan
		if h.psiCPU.OK {
			ev += "; host CPU pressure +" + source.Millis(h.psiCPU.V) + " (/proc/pressure/cpu)"
		}
		notes := x.hostMade
		if h.stopped {
			notes = nil
		}
		x.add(source.CauseCPUWait, "waited for a CPU", x.covers(h.wait), withNotes(ev, notes))
	} else if h.waitOK {
		ev := "run delay +" + source.Millis(h.wait) + " " + h.waitSpan + " (/proc/PID/schedstat)"
		if !h.stopped {
			ev = withNotes(ev, x.hostMade)
		}
		x.check(ev)
	}
	x.faults()
	if h.kernel != "" && x.cause(source.CauseCommand) == nil {
		ev := h.kernel
		if h.psiIO.OK && h.psiIO.V > 0 {
			ev += "; host I/O pressure +" + source.Millis(h.psiIO.V) + " (/proc/pressure/io)"
		}
		x.add(source.CauseKernelWait, "waited in the kernel", source.Opt[time.Duration]{}, ev)
	}
}

func withNotes(ev string, notes []string) string {
	if len(notes) == 0 {
		return ev
	}
	return ev + "; " + strings.Join(notes, "; ")
}

// faultCost and hugeFaultCost bound what one minor page fault can cost
// the faulting thread: a copy-on-write copy of a 4 KiB page takes a few
// microseconds (25 leaves room for a loaded host), of a 2 MiB transparent
// huge page about 0.25 ms. The kernel time of a spike counts as page
// faults only up to its minor faults at that cost.
const (
	faultCost     = 25 * time.Microsecond
	hugeFaultCost = 250 * time.Microsecond
)

func (x *explainer) faults() {
	h := &x.h
	if !h.faultsOK {
		return
	}
	kernel := h.stime - x.forkPause
	ev := "minflt " + plus(h.minflt) + ", majflt " + plus(h.majflt) + ", kernel time +" + source.Millis(max(h.stime, 0)) +
		" (/proc/PID/task/PID/stat)"
	if v, ok := x.e.AnonHuge.Get(); ok && v > 0 {
		ev += "; AnonHugePages " + strconv.FormatInt(v>>20, 10) + " MiB: a copy-on-write fault of a huge page copies 2 MiB"
	}
	if h.psiMem.OK && h.psiMem.V > 0 {
		ev += "; host memory pressure +" + source.Millis(h.psiMem.V) + " (/proc/pressure/memory)"
	}
	// Kernel time is a busy server's syscalls too (its clients' reads and
	// writes): only as much of it as the faults could have cost counts.
	per := faultCost
	if v, ok := x.e.AnonHuge.Get(); ok && v > 0 {
		per = hugeFaultCost
	}
	faulting := min(kernel, time.Duration(h.minflt)*per)
	switch {
	case faulting >= 10*time.Millisecond && x.significant(faulting):
		x.add(source.CauseFaults, "page faults", x.covers(faulting), ev)
	case h.majflt > 0:
		x.add(source.CauseFaults, "major page faults", source.Opt[time.Duration]{}, ev)
	default:
		x.check("page faults: " + ev)
	}
}

func (x *explainer) vkwatch() {
	e := x.e
	switch {
	case e.Stamped:
		x.check("vkwatch's probe: the answer timed by the kernel's receive timestamp (its loop ran up to " +
			source.Millis(e.ProbeLate) + " late, which does not count)")
	case x.significant(e.ProbeLate):
		x.add(source.CauseVkwatch, "vkwatch's probe late", x.covers(e.ProbeLate),
			"its loop ran up to "+source.Millis(e.ProbeLate)+" late, and no kernel timestamp timed the answer")
	default:
		x.check("vkwatch's probe ran up to " + source.Millis(e.ProbeLate) + " late")
	}
}

// verdict names the spike not seen by the server, or unexplained, when
// no cause was found.
func (x *explainer) verdict() {
	if len(x.causes) > 0 {
		return
	}
	h := &x.h
	cant := x.cantSee
	if x.commandUnseen != "" && !h.idle {
		cant = append(cant, x.commandUnseen)
	}
	if x.e.Local && x.e.ProcOK && len(x.e.During) == 0 {
		cant = append(cant, "the server's state while the PING waited (no /proc reading then)")
	}
	if h.busy != "" {
		cant = append(cant, h.busy)
	}
	if len(cant) > 0 {
		x.add(source.CauseUnexplained, "unexplained", source.Opt[time.Duration]{}, "could not check "+strings.Join(cant, "; "))
		return
	}
	where := "a remote server's host is not read"
	switch {
	case x.e.Local && h.idle:
		where = "the server sat idle in its event loop " + h.idleAt
	case x.e.Local:
		where = "the server was on a CPU whenever it had work"
	}
	x.add(source.CauseNotSeen, "not seen by the server", x.covers(x.e.Ping),
		"no slow command, no fork, no cycle; "+where)
}

package source

import (
	"strconv"
	"strings"
	"time"
)

// The spike rule: a PING is a spike when its round trip is above
// SpikeFactor times the p99 of the server's PINGs over the SpikeWindow
// before it, and at least SpikeFloor. The p99 is of the PINGs as they
// came back, each once, and of those that were no spikes themselves: the
// normal is what a PING sees when nothing stands out. (Corrected for
// coordinated omission, as the probe's own figures are, one long stall
// would count as the hundreds of PINGs it held up, lift the normal for a
// minute and hide every shorter stall behind it.) Package spike applies
// the rule.
const (
	SpikeFactor = 3
	SpikeFloor  = 2 * time.Millisecond
	SpikeWindow = time.Minute
)

// SpikeRule says the rule in words, for every place a spike is shown.
const SpikeRule = "a spike is a PING above 3x the p99 of the minute before it (its PINGs that were no spikes, each once) and at least 2 ms"

// CauseKind names what a spike's time went to: a closed set, so that it
// can be a label (vkwatch_ping_spikes_total's cause).
type CauseKind string

// The causes. Each is named only with the evidence for it (see package
// spike): what the server records of itself (INFO counters, SLOWLOG, the
// latency monitor) and, for a server on this host, what the kernel says
// of its main thread.
const (
	// CauseFork: total_forks grew; latest_fork_usec is the pause.
	CauseFork CauseKind = "fork"
	// CauseCommand: a command the server logged as slow (SLOWLOG), or
	// the latency monitor's command events.
	CauseCommand CauseKind = "command"
	// CauseExpire: the active expiry cycle's CPU time
	// (expire_cycle_cpu_milliseconds) grew over the spike.
	CauseExpire CauseKind = "expire"
	// CauseEviction: keys were evicted while used_memory was over
	// maxmemory (evicted_keys, total_eviction_exceeded_time).
	CauseEviction CauseKind = "eviction"
	// CauseLazyFree: objects waiting for the lazy-free thread grew
	// (lazyfree_pending_objects).
	CauseLazyFree CauseKind = "lazyfree"
	// CauseDefrag: active defrag's time (total_active_defrag_time) grew.
	CauseDefrag CauseKind = "defrag"
	// CauseAOF: a write waited for a slow fsync (aof_delayed_fsync), or
	// the latency monitor's aof events.
	CauseAOF CauseKind = "aof"
	// CauseForkless: writers blocked on keys a forkless save held
	// (blocked_clients during a forkless save).
	CauseForkless CauseKind = "forkless"
	// CauseLatencyEvent: another event of the server's latency monitor
	// (LATENCY LATEST), named in the cause.
	CauseLatencyEvent CauseKind = "latency_event"
	// CauseStopped: a local server's main thread was stopped (state T in
	// /proc/PID/stat while the PING waited: SIGSTOP, a debugger).
	CauseStopped CauseKind = "stopped"
	// CauseCPUWait: a local server's main thread waited for a CPU
	// (/proc/PID/schedstat's run delay grew).
	CauseCPUWait CauseKind = "cpu_wait"
	// CauseFaults: a local server's main thread spent its time in the
	// kernel on page faults (/proc/PID/stat minflt, majflt, stime).
	CauseFaults CauseKind = "page_faults"
	// CauseKernelWait: a local server's main thread slept in the kernel
	// (state D, or a wait channel other than the event loop's).
	CauseKernelWait CauseKind = "kernel_wait"
	// CauseVkwatch: vkwatch's own probe read the reply late (its timing
	// had no kernel timestamp, and its loop ran late).
	CauseVkwatch CauseKind = "vkwatch"
	// CauseNotSeen: the server answered as fast as ever by every count it
	// keeps: the time was spent between vkwatch and the server.
	CauseNotSeen CauseKind = "not_seen"
	// CauseUnexplained: nothing checked explains it; the cause says what
	// was checked and what could not be.
	CauseUnexplained CauseKind = "unexplained"
)

// CauseKinds are every cause, in the order a spike lists them.
func CauseKinds() []CauseKind {
	return []CauseKind{CauseFork, CauseCommand, CauseExpire, CauseEviction, CauseLazyFree, CauseDefrag,
		CauseAOF, CauseForkless, CauseLatencyEvent, CauseStopped, CauseCPUWait, CauseFaults,
		CauseKernelWait, CauseVkwatch, CauseNotSeen, CauseUnexplained}
}

// ServerSide reports whether a cause is the server's own doing (a fork, a
// command, a cycle...), as opposed to its host's, vkwatch's or nobody's.
func (k CauseKind) ServerSide() bool {
	switch k {
	case CauseFork, CauseCommand, CauseExpire, CauseEviction, CauseLazyFree, CauseDefrag, CauseAOF,
		CauseForkless, CauseLatencyEvent:
		return true
	}
	return false
}

// SpikeCause is one cause of a spike with its evidence.
type SpikeCause struct {
	Kind CauseKind `json:"kind,omitzero"`
	// What names it for a reader: "fork pause", "DEBUG SLEEP" (a command's
	// name and subcommand, never its arguments), "active expiry".
	What string `json:"what,omitzero"`
	// Covers is how much of the spike the cause's own count of time
	// accounts for (the fork's pause, the command's logged duration, the
	// cycle's CPU time in the spike's window), at most the spike; absent
	// where the server keeps no time for it (blocked writers, a stop).
	Covers Opt[time.Duration] `json:"covers_ns,omitzero"`
	// Evidence names the instruments and what they showed:
	// "latest_fork_usec, total_forks +1", "SLOWLOG #12 from 127.0.0.1:45418".
	Evidence string `json:"evidence,omitzero"`
}

// Text is the cause as a reader sees it beside a spike of ping:
// "fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1)".
func (c SpikeCause) Text(ping time.Duration) string {
	var b strings.Builder
	b.WriteString(c.What)
	if d, ok := c.Covers.Get(); ok && c.Kind != CauseNotSeen && c.Kind != CauseUnexplained {
		b.WriteString(" " + Millis(d))
		if d < ping {
			b.WriteString(" of " + Millis(ping))
		}
	}
	if c.Evidence != "" {
		b.WriteString(" (" + c.Evidence + ")")
	}
	return b.String()
}

// Millis writes d in milliseconds with one decimal: "33.0 ms".
func Millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// Spike is a PING that broke the spike rule, with what explains it: the
// payload of EventSpike, made after the sample that follows the PING's
// answer (the server's counters must have seen it end).
type Spike struct {
	// Ping is the PING's round trip; Normal the p99 of the minute before
	// it and Threshold the rule's bar then (SpikeFactor x Normal, at least
	// SpikeFloor).
	Ping      time.Duration `json:"ping_ns,omitzero,format:nano"`
	Normal    time.Duration `json:"normal_ns,omitzero,format:nano"`
	Threshold time.Duration `json:"threshold_ns,omitzero,format:nano"`
	// Sent is when the PING was sent, an offset of the run clock as an
	// event's t_ns. From and To bound the evidence: the sample whose INFO
	// answered last before the PING was sent, and the first whose INFO
	// was sent after its answer came. Every counter a cause cites grew
	// between these two.
	Sent time.Duration `json:"sent_ns,omitzero,format:nano"`
	From time.Duration `json:"from_ns,omitzero,format:nano"`
	To   time.Duration `json:"to_ns,omitzero,format:nano"`
	// Causes are what explains the spike, each with its evidence, the
	// server's own first; never empty: CauseNotSeen or CauseUnexplained
	// when nothing else.
	Causes []SpikeCause `json:"causes,omitzero"`
	// Checked says what was looked at and found nothing, or could not be
	// read: "no fork (total_forks +0)", "latency monitor off
	// (latency-monitor-threshold 0)".
	Checked []string `json:"checked,omitzero"`
}

// Summary is the causes on one line, joined by " + ":
// "fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1) + ...".
func (s *Spike) Summary() string {
	parts := make([]string, len(s.Causes))
	for i, c := range s.Causes {
		parts[i] = c.Text(s.Ping)
	}
	return strings.Join(parts, " + ")
}

// Line is the spike on one line: "PING 68.9 ms (bar 6.0 ms): fork pause
// 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1)".
func (s *Spike) Line() string {
	return "PING " + Millis(s.Ping) + " (bar " + Millis(s.Threshold) + "): " + s.Summary()
}

// WorstPing is a save's worst PING with its spike's causes, as its report
// says it: "76.8 ms: fork pause 33.0 ms of 76.8 ms (...) + ..."; the round
// trip alone where it broke no spike rule, "n/a" without PINGs.
func (r *SaveReport) WorstPing() string {
	if r.PingDuring.Count == 0 {
		return "n/a"
	}
	t := Millis(r.PingDuring.Max)
	if sp := r.WorstSpike; sp != nil && sp.Ping == r.PingDuring.Max {
		t += ": " + sp.Summary()
	}
	return t
}

// ServerSide reports whether any cause is the server's own doing.
func (s *Spike) ServerSide() bool {
	for _, c := range s.Causes {
		if c.Kind.ServerSide() {
			return true
		}
	}
	return false
}

// Has reports whether the spike has a cause of kind k.
func (s *Spike) Has(k CauseKind) bool {
	for _, c := range s.Causes {
		if c.Kind == k {
			return true
		}
	}
	return false
}

// ProcSched is what the kernel says of a local server's main thread, for
// explaining a spike: read by procmem at every sample (the counters) and
// while a PING waits past the spike rule's bar (the state and wait
// channel). Absent fields could not be read. It is evidence, not a
// figure of its own: a spike's causes cite what grew, and no sample or
// recording holds it.
type ProcSched struct {
	// At is when it was read, a run clock offset.
	At time.Duration
	// State is /proc/PID/task/PID/stat's state: R running or runnable, S
	// sleeping, D in uninterruptible sleep (disk), T stopped (SIGSTOP), t
	// stopped by a tracer; "" unread.
	State string
	// WaitChan is /proc/PID/task/PID/wchan: where in the kernel a
	// sleeping thread waits (do_epoll_wait: the event loop, idle;
	// hrtimer_nanosleep: a sleep), read only while a PING waits.
	WaitChan string
	// OnCPU and RunDelay are /proc/PID/task/PID/schedstat's time on a CPU
	// and time waiting for one, cumulative.
	OnCPU    Opt[time.Duration]
	RunDelay Opt[time.Duration]
	// MinFlt, MajFlt and STime are the thread's minor and major page
	// faults and its time in the kernel (stat fields 10, 12 and 15; STime
	// in clock ticks, 10 ms on most hosts), cumulative.
	MinFlt Opt[int64]
	MajFlt Opt[int64]
	STime  Opt[time.Duration]
	// CPUPressure, MemPressure and IOPressure are the host's pressure
	// stall totals (/proc/pressure/{cpu,memory,io}, "some": time at least
	// one task stalled), cumulative.
	CPUPressure Opt[time.Duration]
	MemPressure Opt[time.Duration]
	IOPressure  Opt[time.Duration]
}

package spike

import (
	"slices"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// host is what /proc said of a local server's main thread over a spike:
// the readings taken while the PING waited (Evidence.During) where there
// are two or more, else the counters at the bounding samples.
type host struct {
	// wait is the run delay (time runnable, waiting for a CPU) over
	// waitSpan ("while the PING waited, 2.0 to 16.1 ms of it", or
	// "between the samples"), and span that span's length.
	waitOK     bool
	wait, span time.Duration
	cpu        time.Duration
	waitSpan   string
	// winWait is the run delay between the samples, whatever the
	// readings while the PING waited: a command logged slow may have run
	// anywhere between them.
	winWaitOK bool
	winWait   time.Duration
	// stopped: a reading showed state T or t; stoppedAt says when, and
	// stoppedFor is the time between the first and last such reading (0
	// with one).
	stopped    bool
	stoppedAt  string
	stoppedFor time.Duration
	// idle: every reading showed the thread asleep in its event loop's
	// wait (idleAt says when), and it ran little on a CPU meanwhile.
	idle   bool
	idleAt string
	// kernel: a reading showed it in uninterruptible sleep, or asleep
	// elsewhere than its event loop.
	kernel string
	// busy: it ran on a CPU most of the time read while the PING waited.
	busy string
	// Page faults and kernel time between the bounding samples.
	faultsOK       bool
	minflt, majflt int64
	stime          time.Duration
	// The host's pressure stall time between the bounding samples.
	psiCPU, psiMem, psiIO source.Opt[time.Duration]
}

// idleChans are the wait channels of a server's event loop waiting for
// clients (epoll_wait; ep_poll on kernels before 5.x).
var idleChans = []string{"do_epoll_wait", "ep_poll"}

func readHost(e *Evidence) host {
	var h host
	if !e.Local || !e.ProcOK {
		return h
	}
	at := func(p source.ProcSched) string { return source.Millis(p.At - e.Sent) }
	span := func(first, last source.ProcSched) string {
		if first.At == last.At {
			return "at " + at(first) + " of the PING"
		}
		return "from " + at(first) + " to " + at(last) + " of the PING"
	}
	// The main thread's schedule while the PING waited, else between the
	// samples.
	var timed []source.ProcSched
	for _, p := range e.During {
		if p.OnCPU.OK && p.RunDelay.OK {
			timed = append(timed, p)
		}
	}
	if b, a := e.ProcBefore, e.ProcAfter; b.RunDelay.OK && a.RunDelay.OK {
		h.winWaitOK, h.winWait = true, a.RunDelay.V-b.RunDelay.V
	}
	if n := len(timed); n >= 2 && timed[n-1].At > timed[0].At {
		f, l := timed[0], timed[n-1]
		h.waitOK, h.wait, h.cpu, h.span = true, l.RunDelay.V-f.RunDelay.V, l.OnCPU.V-f.OnCPU.V, l.At-f.At
		h.waitSpan = "while the PING waited, " + strings.TrimPrefix(span(f, l), "from ")
	} else if b, a := e.ProcBefore, e.ProcAfter; b.RunDelay.OK && a.RunDelay.OK && b.OnCPU.OK && a.OnCPU.OK {
		h.waitOK, h.wait, h.cpu, h.span = true, a.RunDelay.V-b.RunDelay.V, a.OnCPU.V-b.OnCPU.V, a.At-b.At
		h.waitSpan = "between the samples"
	}
	h.readStates(e, span)
	b, a := e.ProcBefore, e.ProcAfter
	if b.MinFlt.OK && a.MinFlt.OK && b.MajFlt.OK && a.MajFlt.OK && b.STime.OK && a.STime.OK {
		h.faultsOK = true
		h.minflt, h.majflt, h.stime = a.MinFlt.V-b.MinFlt.V, a.MajFlt.V-b.MajFlt.V, a.STime.V-b.STime.V
	}
	pressure := func(x, y source.Opt[time.Duration]) source.Opt[time.Duration] {
		if x.OK && y.OK && y.V >= x.V {
			return source.Some(y.V - x.V)
		}
		return source.Opt[time.Duration]{}
	}
	h.psiCPU, h.psiMem, h.psiIO = pressure(b.CPUPressure, a.CPUPressure), pressure(b.MemPressure, a.MemPressure),
		pressure(b.IOPressure, a.IOPressure)
	return h
}

// readStates reads the thread's states while the PING waited.
func (h *host) readStates(e *Evidence, span func(first, last source.ProcSched) string) {
	var stopped, idle []source.ProcSched
	for _, p := range e.During {
		switch {
		case p.State == "T" || p.State == "t":
			stopped = append(stopped, p)
		case p.State == "S" && slices.Contains(idleChans, p.WaitChan):
			idle = append(idle, p)
		case p.State == "D" && h.kernel == "":
			h.kernel = "state D " + span(p, p)
			if p.WaitChan != "" && p.WaitChan != "0" {
				h.kernel += " (wchan " + p.WaitChan + ")"
			}
		case p.State == "S" && p.WaitChan != "" && p.WaitChan != "0" && h.kernel == "":
			h.kernel = "asleep in " + p.WaitChan + " " + span(p, p)
		}
	}
	if n := len(stopped); n > 0 {
		h.stopped, h.stoppedAt = true, span(stopped[0], stopped[n-1])
		h.stoppedFor = stopped[n-1].At - stopped[0].At
	}
	if n := len(idle); n > 0 && n == len(e.During) && (!h.waitOK || h.cpu < h.span/4) {
		h.idle, h.idleAt = true, span(idle[0], idle[n-1])+" (wchan "+idle[0].WaitChan+")"
	}
	if h.waitOK && h.span > 0 && h.cpu >= h.span/2 && len(e.During) >= 2 {
		h.busy = "what kept the server on a CPU " + source.Millis(h.cpu) + " " + h.waitSpan +
			" (no command logged so slow, no cycle counted)"
	}
}

// madeSlow says why command s, logged slow during the spike, is not the
// server's doing: the thread was stopped, or it waited for a CPU at least
// half as long as s is logged to have taken between the samples (where s
// ran), and s is a command that is
// fast on this server (its logged time ten times its own median, INFO
// latencystats' p50: a SET the host held up, where a KEYS or a DEBUG SLEEP
// is slow by itself; without latencystats, any command). "" when the
// command is to blame.
func (h *host) madeSlow(x *explainer, s SlowEntry) string {
	if h.stopped {
		return "logged while the server was stopped"
	}
	if !h.winWaitOK || h.winWait < s.Duration/2 {
		return ""
	}
	if st, ok := x.stats(s.Command); ok && s.Duration < 10*st.P50 {
		return ""
	}
	return "logged while the server waited " + source.Millis(h.winWait) + " for a CPU between the samples"
}

// stats is a command's INFO latencystats line: by its name and
// subcommand as latencystats keys them ("config|get"), else by its name
// alone ("debug").
func (x *explainer) stats(command string) (CommandStats, bool) {
	if st, ok := x.e.Stats[strings.ToLower(strings.ReplaceAll(command, " ", "|"))]; ok {
		return st, true
	}
	st, ok := x.e.Stats[strings.ToLower(firstWord(command))]
	return st, ok
}

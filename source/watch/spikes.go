package watch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/probe"
	"github.com/vkwatch/vkwatch/source/serverlog"
	"github.com/vkwatch/vkwatch/source/spike"
)

// spikes is a Run's spike reading (package spike): the probe counts its
// PINGs into base; each sample hands the detector its INFO, the kernel's
// counters of a local server's main thread, and its interval's worst
// PING; a spike bounded by two samples is explained from them, SLOWLOG,
// LATENCY LATEST and INFO latencystats read then (serverlog: only after a
// spike, at most once a sample), and the /proc readings taken while its
// PING waited. Each becomes an EventSpike, handed to the save tracker
// first.
type spikes struct {
	base spike.Baseline
	det  *spike.Detector[mark]
	log  serverlog.Reader
	// probeOff is the run clock's offset less the probe's clock (Now).
	probeOff time.Duration
	// lates are the probe's lateness by sample, for the window's worst.
	lates [keepLates]late

	// pid is the local server's process id for the readings while a PING
	// waits (0: none: remote, or no /proc), read by the probe's hook.
	pid atomic.Int64
	// duringMu guards during: the /proc readings taken while a PING
	// waited, newest last, at most keepDuring.
	duringMu sync.Mutex
	during   []source.ProcSched
}

// mark is what a spike keeps of a sample.
type mark struct {
	info  *source.Info
	sched source.ProcSched
}

type late struct {
	at, late time.Duration
}

const (
	keepLates  = 8
	keepDuring = 64
)

// startSpikes prepares the spike reading of a Run whose probe is p (nil:
// the watcher reads no spikes).
func (s *sampling) startSpikes(p *probe.Probe) {
	w := s.w
	if w.cfg.NoSpikes {
		return
	}
	sp := &spikes{probeOff: w.clock.Offset() - time.Duration(probe.Now())}
	sp.det = spike.NewDetector[mark](&sp.base)
	p.CountIntervals(&sp.base)
	if w.cfg.Sched != nil && w.ep.Local() {
		p.OnStall(func(sent int64) { sp.stalled(w.cfg.Sched) })
	}
	s.spikes = sp
}

// stalled reads the local server's main thread while a PING waits, there
// and then, on the probe's goroutine: four small files of /proc, tens of
// microseconds, at most eight times a stalled PING. A goroutine of its
// own would start when the scheduler gets to it: on a loaded host, after
// a 500 ms SIGSTOP had ended (seen here).
func (sp *spikes) stalled(read func(int64, time.Duration, bool) source.ProcSched) {
	pid := sp.pid.Load()
	if pid <= 0 {
		return
	}
	r := read(pid, time.Duration(probe.Now())+sp.probeOff, true)
	sp.duringMu.Lock()
	if len(sp.during) == keepDuring {
		sp.during = append(sp.during[:0], sp.during[1:]...)
	}
	sp.during = append(sp.during, r)
	sp.duringMu.Unlock()
}

// duringPING is the readings taken while the PING sent at sent and
// answered at answered waited.
func (sp *spikes) duringPING(sent, answered time.Duration) []source.ProcSched {
	sp.duringMu.Lock()
	defer sp.duringMu.Unlock()
	var out []source.ProcSched
	for _, r := range sp.during {
		if r.At >= sent && r.At <= answered {
			out = append(out, r)
		}
	}
	return out
}

// lateIn is how late the probe ran at worst in the intervals ending in
// (from, to].
func (sp *spikes) lateIn(from, to time.Duration) time.Duration {
	var d time.Duration
	for _, l := range sp.lates {
		if l.at > from && l.at <= to {
			d = max(d, l.late)
		}
	}
	return d
}

// sampleSpikes hands the detector sample smp, its INFO sent at sent, and
// explains the spikes it bounds: each goes to the save tracker and out as
// an EventSpike, before the sample's own events.
func (s *sampling) sampleSpikes(ctx context.Context, smp *source.Sample, sent time.Duration) {
	sp := s.spikes
	if sp == nil || s.probe == nil {
		return
	}
	w := s.w
	in := &smp.Info
	m := mark{info: in}
	local := w.cfg.Sched != nil && w.ep.Local() && in.ProcessID.OK
	if local {
		sp.pid.Store(in.ProcessID.V)
		m.sched = w.cfg.Sched(in.ProcessID.V, smp.Offset, false)
	} else {
		sp.pid.Store(0)
	}
	pw := s.probe.LastWorst()
	copy(sp.lates[:], sp.lates[1:])
	sp.lates[keepLates-1] = late{at: smp.Offset, late: pw.Late}
	worst := spike.Worst{Ping: smp.Ping.Max, Sent: time.Duration(pw.Sent) + sp.probeOff, Stamped: pw.Stamped}
	if smp.Ping.Count == 0 {
		worst.Ping = 0
	}
	ready := sp.det.Sample(sent, smp.Offset, m, worst)
	if normal, bar, ok := sp.base.Threshold(); ok {
		w.spikeNormal.Store(int64(normal))
		w.spikeBar.Store(int64(bar))
		if local {
			s.probe.SetStallAfter(bar)
		}
	}
	if len(ready) == 0 {
		return
	}
	logs := s.readLogs(ctx, smp.Config)
	for _, r := range ready {
		e := spike.Evidence{Ping: r.Ping, Sent: r.Sent, After: r.After.info, Config: smp.Config,
			Local: w.ep.Local(), ProcAfter: r.After.sched, AnonHuge: smp.Proc.AnonHugePages,
			Stamped: r.Stamped, ProbeLate: sp.lateIn(r.From, r.To)}
		if r.HaveBefore {
			e.Before, e.ProcBefore = r.Before.info, r.Before.sched
		}
		e.ProcOK = e.Local && r.After.sched.OnCPU.OK
		if e.ProcOK {
			e.During = sp.duringPING(r.Sent, r.Answered)
		}
		logs.Into(&e)
		causes, checked := spike.Explain(&e)
		ev := &source.Spike{Ping: r.Ping, Normal: r.Normal, Threshold: r.Threshold, Sent: r.Sent,
			From: r.From, To: r.To, Causes: causes, Checked: checked}
		s.tracker.ObserveSpike(ev)
		s.push(source.Event{Kind: source.EventSpike, Offset: smp.Offset, Spike: ev})
	}
}

// readLogs reads what the server logged of itself (serverlog), once for
// the spikes a sample bounds; LATENCY LATEST only where the latency
// monitor is on.
func (s *sampling) readLogs(ctx context.Context, cfg source.SaveConfig) serverlog.Result {
	w := s.w
	c := w.client(&w.sampler, w.cfg.ConnectTimeout)
	if c == nil {
		return serverlog.Result{SlowLogErr: "watcher closed"}
	}
	rctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	res, err := s.spikes.log.Read(rctx, c, cfg.LatencyMonitorThreshold.V > 0)
	if err != nil {
		if transportError(err) {
			w.drop(&w.sampler, c)
		}
		return serverlog.Result{SlowLogErr: "not read: " + oneLine(err)}
	}
	return res
}

// SpikeBar is the spike rule as it stands for this server (source.SpikeRule):
// normal, the p99 of the minute's PINGs, and bar, the round trip a PING
// must pass to be a spike; false until the minute holds enough PINGs
// (about a second of them), and with NoSpikes.
func (w *Watcher) SpikeBar() (normal, bar time.Duration, ok bool) {
	b := time.Duration(w.spikeBar.Load())
	return time.Duration(w.spikeNormal.Load()), b, b > 0
}

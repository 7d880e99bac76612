package forecast

import (
	"fmt"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// RateWindow is how far back the write rate of a forecast looks: long
// enough to smooth the sampler's 200 ms steps, short enough to follow a
// load that changes.
const RateWindow = 5 * time.Second

// StallAfter is how long a save's keys processed may stand still, below
// the total, before the save is called stuck. The child reports its
// progress about once a second and every 1024 keys, so five reports in a
// row have been missed; a single huge key (a hash of millions of fields)
// can take that long too, which is why the badge says what it saw rather
// than that the save is dead.
const StallAfter = 5 * time.Second

// overrun is how far past the forecast duration a save must run to be
// called stuck for its time alone: three times as long, and at least
// overrunSlack more.
const (
	overrun      = 3
	overrunSlack = 10 * time.Second
)

// Node keeps what one node's forecast needs across its samples: the write
// rate of the last RateWindow while no save ran, the calibration of its
// last fork save and, while a save runs, when its progress last moved.
// Feed it every sample (Observe) and every report (Learn), in order.
type Node struct {
	last  *source.Sample
	rates []ratePoint
	cal   *Calibration
	// forkless is what the node's last forkless save showed (nil before
	// one): the forkless side of the forecast.
	forkless *ForklessSave
	// forcedFork: the last BGSAVE forked though bgsave-default-method was
	// forkless (source.SaveReport.MethodNote): the next is forecast as a
	// fork, the method setting notwithstanding.
	forcedFork bool

	// The running save's progress: the last value of keys processed and
	// the offset of the sample where it last changed.
	saveStarted time.Duration
	processed   source.Opt[int64]
	movedAt     time.Duration
	// before is the forecast made from the last sample before the
	// running save: what the save's report is compared with; pending is
	// the latest sample's, which becomes before when a save starts.
	before, pending source.Opt[Forecast]
}

type ratePoint struct {
	off time.Duration
	ops float64
}

// Observe takes a node's next sample (after the save tracker has set its
// Save).
func (n *Node) Observe(s *source.Sample) {
	if s == nil {
		return
	}
	if s.Save == nil {
		if v, ok := s.OpsPerSec.Get(); ok {
			n.rates = append(n.rates, ratePoint{s.Offset, v})
		}
		cut := 0
		for cut < len(n.rates) && n.rates[cut].off < s.Offset-RateWindow {
			cut++
		}
		n.rates = append(n.rates[:0], n.rates[cut:]...)
		n.last = s
		n.processed = source.Opt[int64]{}
		f, ok := n.Forecast()
		n.pending = source.Opt[Forecast]{V: f, OK: ok}
		return
	}
	if n.last == nil || n.last.Save == nil || n.saveStarted != s.Save.Started {
		// A new save: the forecast of the sample before it is the one
		// it is judged against.
		n.saveStarted, n.movedAt, n.processed = s.Save.Started, s.Offset, s.Save.Processed
		n.before = n.pending
	} else if s.Save.Processed != n.processed {
		n.processed, n.movedAt = s.Save.Processed, s.Offset
	}
	n.last = s
}

// Rate is the mean ops/s of the last RateWindow while no save ran.
func (n *Node) Rate() source.Opt[float64] {
	if len(n.rates) == 0 {
		return source.Opt[float64]{}
	}
	var sum float64
	for _, p := range n.rates {
		sum += p.ops
	}
	return source.Some(sum / float64(len(n.rates)))
}

// Peak is the highest ops/s of one sample of the last RateWindow while
// no save ran: the rate the upper bound takes.
func (n *Node) Peak() source.Opt[float64] {
	if len(n.rates) == 0 {
		return source.Opt[float64]{}
	}
	peak := n.rates[0].ops
	for _, p := range n.rates[1:] {
		peak = max(peak, p.ops)
	}
	return source.Some(peak)
}

// Learn takes a finished save's report: a fork save calibrates the
// node's next forecasts. It returns the forecast that was made just
// before that save, for the report's side-by-side (absent when none was:
// a save that ran between two samples has the latest sample's).
func (n *Node) Learn(r *source.SaveReport) source.Opt[Forecast] {
	before := n.before
	if !before.OK {
		before = n.pending
	}
	n.before = source.Opt[Forecast]{}
	switch r.Kind {
	case source.SaveFork:
		n.forcedFork = r.MethodNote != ""
	case source.SaveForkless:
		n.forcedFork = false
	}
	if f, ok := LearnForkless(r); ok {
		n.forkless = &f
	}
	if c, ok := Calibrate(r); ok {
		if c.K == 0 && n.cal != nil && n.cal.K > 0 {
			// A save with no writes to learn from keeps the last k and
			// gives its own speed.
			c.K, c.Saturated, c.Rate = n.cal.K, n.cal.Saturated, n.cal.Rate
		}
		n.cal = &c
	}
	return before
}

// Calibration is the node's, nil before its first fork save.
func (n *Node) Calibration() *Calibration { return n.cal }

// Forecast is the next fork save's forecast from the node's latest
// sample, false before one with used_memory.
func (n *Node) Forecast() (Forecast, bool) {
	if n.last == nil {
		return Forecast{}, false
	}
	now := NowOf(n.last, n.Rate(), n.Peak())
	now.Forkless = now.Forkless && !n.forcedFork
	return Predict(now, n.cal)
}

// ForkForecast is the next save's forecast were it a fork, whatever the
// method set: the fork side of a forecast of both methods.
func (n *Node) ForkForecast() (Forecast, bool) {
	if n.last == nil {
		return Forecast{}, false
	}
	now := NowOf(n.last, n.Rate(), n.Peak())
	now.Forkless = false
	return Predict(now, n.cal)
}

// ForklessForecast is the next save's forecast were it forkless, from
// the node's last forkless save; false before one (NoForklessYet) or
// before a sample with used_memory.
func (n *Node) ForklessForecast() (ForklessForecast, bool) {
	if n.last == nil {
		return ForklessForecast{}, false
	}
	return PredictForkless(NowOf(n.last, n.Rate(), n.Peak()), n.forkless)
}

// ForcedFork says the node's last BGSAVE forked though
// bgsave-default-method was forkless: the forecast is a fork's.
func (n *Node) ForcedFork() bool { return n.forcedFork }

// Stuck says whether the running save looks stuck, and why: its keys
// processed have stood still for StallAfter below the total, or it has
// run far past the forecast duration. A save at N/N is flushing and
// renaming its file, which takes what the disk takes: never stuck.
func (n *Node) Stuck() (string, bool) {
	s := n.last
	if s == nil || s.Save == nil {
		return "", false
	}
	p := s.Save
	done, total := p.Processed, p.Total
	if done.OK && total.OK && done.V >= total.V || p.Phase == source.PhaseFinishing || p.Phase == source.PhaseCancelling {
		// Writing the file (a forkless save's keys processed may stay
		// below the total then: the thread stores it at most once a
		// second) or stopping after a cancel: no keys to move.
		return "", false
	}
	if still, ok := n.Stalled(); ok && still >= StallAfter {
		return fmt.Sprintf("no progress for %s at %s/%s keys", still.Round(time.Second), count(float64(done.V)), count(float64(total.V))), true
	}
	if n.before.OK && n.before.V.Duration > 0 {
		exp := n.before.V.Duration
		if limit := max(overrun*exp, exp+overrunSlack); p.Elapsed > limit {
			return fmt.Sprintf("running %s, forecast %s", p.Elapsed.Round(time.Second), exp.Round(100*time.Millisecond)), true
		}
	}
	return "", false
}

// Stalled is how long the running save's keys processed have stood still
// below the total, as of the latest sample: 0 while they move, and once
// they reached the total (the server is writing out its file). False when
// no save runs or the server does not report its progress.
func (n *Node) Stalled() (time.Duration, bool) {
	s := n.last
	if s == nil || s.Save == nil || !s.Save.Processed.OK || !s.Save.Total.OK {
		return 0, false
	}
	if s.Save.Processed.V >= s.Save.Total.V {
		return 0, true
	}
	return s.Offset - n.movedAt, true
}

package spike

import "time"

// Detector judges each sampling interval's worst PING by the spike rule
// and holds each spike until a sample can bound it: the counters a cause
// cites must have been read before the PING was sent and again after its
// answer came. E is what the watcher keeps of a sample as evidence (its
// INFO, the /proc counters); the Detector keeps the last few.
//
// Times are offsets of the run clock. A Detector is not safe for
// concurrent use: the sampler calls it.
type Detector[E any] struct {
	base    *Baseline
	marks   []mark[E] // the latest samples, oldest first
	waiting []Found   // spikes whose after-sample has not come
}

// mark is one sample: when its INFO was sent and answered, and what the
// watcher keeps of it.
type mark[E any] struct {
	sent, answered time.Duration
	ev             E
}

// keepMarks bounds the samples a Detector keeps: a spike whose PING was
// sent further back than that (a PING unanswered for several samples)
// is bounded by the oldest kept, which still precedes it.
const keepMarks = 16

// Worst is an interval's slowest PING: its round trip (0 when none was
// answered), when it was sent, and whether the kernel timed its answer.
type Worst struct {
	Ping, Sent time.Duration
	Stamped    bool
}

// Found is a PING that broke the rule: its round trip, when it was sent
// and answered, whether the kernel timed it, and the rule's normal and
// bar when it was judged.
type Found struct {
	Ping, Normal, Threshold time.Duration
	Sent, Answered          time.Duration
	Stamped                 bool
}

// Ready is a spike bounded by two samples: Before, the last whose INFO
// answered before the PING was sent (HaveBefore false when no such sample
// is kept: the first sample after connecting), and After, the first whose
// INFO was sent after the answer came.
type Ready[E any] struct {
	Found
	From, To      time.Duration // Before's answer and After's
	Before, After E
	HaveBefore    bool
}

// NewDetector returns a Detector that judges by base's normal (the probe
// counts its round trips into base).
func NewDetector[E any](base *Baseline) *Detector[E] { return &Detector[E]{base: base} }

// Sample takes one sample: its INFO's round trip, what the watcher keeps
// of it, and the worst PING answered in the interval it closes. It
// returns the spikes this sample is the after-sample of, in the order they
// were found.
func (d *Detector[E]) Sample(infoSent, infoAnswered time.Duration, ev E, w Worst) []Ready[E] {
	if w.Ping > 0 {
		// The bar as it stood before this interval: the probe has counted
		// the interval, and the baseline holds it apart until the next.
		if normal, bar, ok := d.base.Threshold(); ok && w.Ping > bar {
			d.waiting = append(d.waiting, Found{Ping: w.Ping, Normal: normal, Threshold: bar,
				Sent: w.Sent, Answered: w.Sent + w.Ping, Stamped: w.Stamped})
		}
	}
	d.marks = append(d.marks, mark[E]{sent: infoSent, answered: infoAnswered, ev: ev})
	if len(d.marks) > keepMarks {
		d.marks = append(d.marks[:0], d.marks[len(d.marks)-keepMarks:]...)
	}
	var out []Ready[E]
	kept := d.waiting[:0]
	for _, f := range d.waiting {
		if infoSent < f.Answered {
			// This INFO may have run before the stall ended: wait for
			// one sent after the answer.
			kept = append(kept, f)
			continue
		}
		r := Ready[E]{Found: f, To: infoAnswered, After: ev}
		for i := len(d.marks) - 1; i >= 0; i-- {
			if m := d.marks[i]; m.answered <= f.Sent {
				r.Before, r.From, r.HaveBefore = m.ev, m.answered, true
				break
			}
		}
		out = append(out, r)
	}
	d.waiting = kept
	return out
}

// Waiting reports whether a spike waits for its after-sample.
func (d *Detector[E]) Waiting() bool { return len(d.waiting) > 0 }

// Reset forgets the samples and the spikes waiting (the connection was
// lost: counters across the gap bound nothing); the baseline stays.
func (d *Detector[E]) Reset() {
	clear(d.marks)
	d.marks = d.marks[:0]
	d.waiting = d.waiting[:0]
}

package spike

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// warm returns a Detector whose baseline holds two seconds of 100 µs
// PINGs: normal 111 µs, bar the 2 ms floor.
func warm() (*Detector[int], *Baseline) {
	b := &Baseline{}
	now := fill(b, 0, 1000, 100)
	b.Interval(now, nil, 2000)
	return NewDetector[int](b), b
}

func TestNoSpikeAtTheBar(t *testing.T) {
	d, _ := warm()
	d.Sample(0, 1*ms, 1, Worst{Ping: 0, Sent: 0})
	if r := d.Sample(200*ms, 201*ms, 2, Worst{Ping: 2 * ms, Sent: 100 * ms}); len(r) != 0 || d.Waiting() {
		t.Errorf("a PING at the bar is a spike: %+v", r)
	}
	if r := d.Sample(400*ms, 401*ms, 3, Worst{Ping: 2*ms + time.Microsecond, Sent: 300 * ms}); len(r) != 1 {
		t.Errorf("a PING just above the bar is none: %+v", r)
	}
}

func TestNoSpikeBeforeANormal(t *testing.T) {
	d := NewDetector[int](&Baseline{})
	if r := d.Sample(0, ms, 1, Worst{Ping: time.Second, Sent: 0}); len(r) != 0 || d.Waiting() {
		t.Errorf("a spike judged with no minute before it: %+v", r)
	}
}

// TestBoundedBySamples: a spike is bounded by the last sample answered
// before the PING was sent and the first sent after its answer.
func TestBoundedBySamples(t *testing.T) {
	d, _ := warm()
	d.Sample(0, 1*ms, 1, Worst{Ping: 0, Sent: 0})
	d.Sample(200*ms, 260*ms, 2, Worst{Ping: 0, Sent: 0}) // answered after the PING below was sent
	// The PING sent at 250 ms took 70 ms: answered at 320 ms, before
	// this sample's INFO was sent at 400 ms.
	r := d.Sample(400*ms, 401*ms, 3, Worst{Ping: 70 * ms, Sent: 250 * ms})
	if len(r) != 1 {
		t.Fatalf("ready %+v", r)
	}
	got := r[0]
	if got.Before != 1 || got.After != 3 || got.From != 1*ms || got.To != 401*ms || !got.HaveBefore {
		t.Errorf("bounded by %+v", got)
	}
	if got.Ping != 70*ms || got.Sent != 250*ms || got.Answered != 320*ms || got.Threshold != 2*ms || got.Normal != 111*time.Microsecond {
		t.Errorf("found %+v", got.Found)
	}
}

// TestWaitsForAnINFOSentAfter: the sample whose INFO was sent before the
// answer came may have run before the stall ended: the next one bounds it.
func TestWaitsForAnINFOSentAfter(t *testing.T) {
	d, _ := warm()
	d.Sample(0, 1*ms, 1, Worst{Ping: 0, Sent: 0})
	// The PING sent at 150 ms took 100 ms (answered at 250); this INFO
	// was sent at 200 ms, stalled with it.
	if r := d.Sample(200*ms, 251*ms, 2, Worst{Ping: 100 * ms, Sent: 150 * ms}); len(r) != 0 || !d.Waiting() {
		t.Fatalf("bounded by an INFO sent before its answer: %+v", r)
	}
	r := d.Sample(400*ms, 401*ms, 3, Worst{Ping: 0, Sent: 0})
	if len(r) != 1 || r[0].Before != 1 || r[0].After != 3 {
		t.Errorf("ready %+v", r)
	}
	if d.Waiting() {
		t.Error("still waiting")
	}
}

func TestNoSampleBefore(t *testing.T) {
	d, _ := warm()
	r := d.Sample(200*ms, 201*ms, 1, Worst{Ping: 50 * ms, Sent: 100 * ms})
	if len(r) != 1 || r[0].HaveBefore {
		t.Errorf("ready %+v", r)
	}
}

func TestReset(t *testing.T) {
	d, b := warm()
	d.Sample(0, 1*ms, 1, Worst{Ping: 0, Sent: 0})
	d.Sample(200*ms, 251*ms, 2, Worst{Ping: 100 * ms, Sent: 150 * ms})
	d.Reset()
	if d.Waiting() {
		t.Error("a spike waits across a reconnect")
	}
	if _, ok := b.Normal(); !ok {
		t.Error("the baseline was forgotten")
	}
	if r := d.Sample(400*ms, 401*ms, 3, Worst{Ping: 0, Sent: 0}); len(r) != 0 {
		t.Errorf("ready after a reset: %+v", r)
	}
}

func TestKeepsFewSamples(t *testing.T) {
	d, _ := warm()
	for i := range 100 {
		d.Sample(time.Duration(i)*200*ms, time.Duration(i)*200*ms+ms, i, Worst{Ping: 0, Sent: 0})
	}
	if len(d.marks) != keepMarks {
		t.Errorf("kept %d samples", len(d.marks))
	}
	// A PING sent long ago is bounded by the oldest sample kept that
	// answered before it... here none did: no before.
	r := d.Sample(20*time.Second, 20*time.Second+ms, 100, Worst{Ping: 19 * time.Second, Sent: 500 * ms})
	if len(r) != 1 || r[0].HaveBefore {
		t.Errorf("ready %+v", r)
	}
}

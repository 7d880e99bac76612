package spike

import (
	"testing"
	"time"
)

// TestBuckets: every round trip falls in a bucket whose top is at least it
// and at most 25 % above it, and the buckets go up with the round trip.
func TestBuckets(t *testing.T) {
	prev := 0
	for us := int64(1); us < 1<<26; us += 1 + us/97 {
		i := bucketOf(us)
		top := bucketTop(i)
		if top < us || float64(top) > 1.25*float64(us)+1 {
			t.Fatalf("%d µs: bucket %d tops at %d", us, i, top)
		}
		if i < prev {
			t.Fatalf("%d µs: bucket %d below the previous %d", us, i, prev)
		}
		prev = i
	}
	if bucketOf(0) != 1 || bucketOf(1<<40) != nBuckets-1 {
		t.Errorf("out of range: %d %d", bucketOf(0), bucketOf(1<<40))
	}
}

// fill counts n round trips of us into b, one interval of 100 a second
// apart from from, and returns the time after them.
func fill(b *Baseline, from int64, n int, us int64) int64 {
	rtts := make([]int64, 0, 100)
	for n > 0 {
		k := min(n, 100)
		rtts = rtts[:0]
		for range k {
			rtts = append(rtts, us)
		}
		b.Interval(from, rtts, 2000)
		from += int64(time.Second)
		n -= k
	}
	return from
}

func TestNormalNeedsASecond(t *testing.T) {
	var b Baseline
	now := fill(&b, 0, minPINGs, 100)
	if _, ok := b.Normal(); ok {
		t.Fatal("a normal from the held-apart interval's PINGs too")
	}
	b.Interval(now, nil, 2000) // the last interval joins
	if n, ok := b.Normal(); !ok || n != 111*time.Microsecond {
		t.Errorf("normal %v %v, want the top of 100 µs's bucket, 111 µs", n, ok)
	}
}

// TestNormalIsP99: 99 % of the PINGs at 100 µs keep the normal there; one
// more slow PING takes it to the slow ones.
func TestNormalIsP99(t *testing.T) {
	var b Baseline
	rtts := make([]int64, 0, 1000)
	for i := range 1000 {
		us := int64(100)
		if i >= 990 {
			us = 1500 // under the 2 ms interval: no correction
		}
		rtts = append(rtts, us)
	}
	b.Interval(0, rtts, 2000)
	b.Interval(1, nil, 2000)
	if n, _ := b.Normal(); n != 111*time.Microsecond {
		t.Errorf("10 slow of 1000: normal %v, want 111µs", n)
	}
	rtts[989] = 1500
	var c Baseline
	c.Interval(0, rtts, 2000)
	c.Interval(1, nil, 2000)
	if n, _ := c.Normal(); n != 1535*time.Microsecond {
		t.Errorf("11 slow of 1000: normal %v, want the top of 1500 µs's bucket, 1535µs", n)
	}
	if _, bar, _ := c.Threshold(); bar != 3*1535*time.Microsecond {
		t.Errorf("bar %v", bar)
	}
	if _, bar, _ := b.Threshold(); bar != 2*time.Millisecond {
		t.Errorf("bar %v, want the 2 ms floor", bar)
	}
}

// TestNotCorrected: a PING of 100 ms at a 2 ms interval counts once, not
// as the 50 PINGs the probe's own histograms count it as.
func TestNotCorrected(t *testing.T) {
	var b Baseline
	b.Interval(0, []int64{100_000}, 2000)
	b.Interval(1, nil, 2000)
	if n := b.blocks[b.head].n; n != 1 {
		t.Errorf("counted %d, want 1", n)
	}
}

// TestLastHeldApart: the interval counted last is not in the normal it is
// judged by.
func TestLastHeldApart(t *testing.T) {
	var b Baseline
	now := fill(&b, 0, 2000, 100)
	before, _ := b.Normal()
	slower := make([]int64, 3000)
	for i := range slower {
		slower[i] = 300 // under the 2 ms bar: normal
	}
	b.Interval(now, slower, 2000)
	if n, _ := b.Normal(); n != before {
		t.Errorf("normal %v after its own interval, want %v", n, before)
	}
	b.Interval(now+1, nil, 2000)
	if n, _ := b.Normal(); n <= before {
		t.Errorf("normal %v once the interval is the minute's, want above %v", n, before)
	}
}

// TestSpikesNotNormal: a PING above the bar, and the PINGs it held up,
// are not counted: a second-long stall leaves the normal as it was.
func TestSpikesNotNormal(t *testing.T) {
	var b Baseline
	now := fill(&b, 0, 2000, 100)
	before, _ := b.Normal()
	b.Interval(now, []int64{1_000_000, 2500, 1500}, 2000)
	b.Interval(now+1, nil, 2000)
	if n, _ := b.Normal(); n != before {
		t.Errorf("normal %v after a stall, want %v", n, before)
	}
	var got uint64
	for _, bl := range b.blocks {
		got += bl.n
	}
	if got != 2000+1 {
		t.Errorf("counted %d, want the 2000 before and the one PING under the bar", got)
	}
}

// TestMinuteMovesOn: PINGs older than the minute leave it; a gap of a
// minute starts it afresh.
func TestMinuteMovesOn(t *testing.T) {
	var b Baseline
	now := fill(&b, 0, 1000, 50_000) // slow at first
	now = fill(&b, now, 45*100, 100) // then 45 s of fast ones
	if n, _ := b.Normal(); n < 40*time.Millisecond {
		t.Fatalf("normal %v: the slow start left the minute too soon", n)
	}
	now = fill(&b, now, 20*100, 100)
	if n, _ := b.Normal(); n != 111*time.Microsecond {
		t.Errorf("normal %v: the slow start is over a minute old", n)
	}
	b.Interval(now+int64(2*time.Minute), []int64{100}, 2000)
	if _, ok := b.Normal(); ok {
		t.Error("a normal across a two-minute gap")
	}
}

// Package spike finds a server's PING spikes by the rule source.SpikeRule
// states (Baseline, Detector) and explains each from what the server
// records of itself and, for a server on this host, what the kernel says
// of its main thread (Explain): pure logic over evidence the watcher reads
// (INFO, SLOWLOG, LATENCY LATEST, INFO latencystats, /proc), so that every
// rule is tested on its edges without a server.
package spike

import (
	"math/bits"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// Baseline is the spike rule's normal: the p99 of a server's PING round
// trips over the last minute, counted in blocks of blockSpan so that the
// minute moves on without keeping a PING: a block is a histogram of
// buckets four to a doubling (each at most 25 % wide). The probe counts
// every closed interval into it (Interval).
//
// It counts each PING once, as it came back, and leaves the spikes out:
// the normal is what a PING sees when nothing stands out. The probe's own
// figures are corrected for coordinated omission (a stall also counts the
// PINGs it held up), which is right for the latency users see but wrong
// for a normal: one stall of 600 ms is then 1 % of a minute's PINGs at
// 2 ms and lifts the p99 to its own length, and every stall shorter than
// three times that goes unnoticed for a minute. Measured here: corrected,
// the first second's stalls under load held the bar at 1.18 s while PINGs
// took 10 to 140 ms, and a 430 ms expiry cycle was no spike.
//
// The interval counted last is held apart until the next one comes:
// Normal is what came before the PINGs being judged, never those PINGs
// themselves.
//
// A Baseline is about 3 KB. It is not safe for concurrent use: the
// probe's Summary and the watcher's sampler run on one goroutine.
type Baseline struct {
	blocks [nBlocks]block
	head   int   // the block being filled
	start  int64 // when it began, in the probe's clock (ns)
	last   block // the interval counted last
	began  bool
}

const (
	// blockSpan is how much time one block counts.
	blockSpan = 10 * time.Second
	// nBlocks blocks make the minute (the one being filled is the sixth,
	// so the window is 50 to 60 s).
	nBlocks = int(source.SpikeWindow / blockSpan)
	// nBuckets covers 1 µs to 2^26 µs (67 s) at four buckets a doubling.
	nBuckets = 4 * 25
	// minPINGs is how many round trips the minute must hold before a
	// spike can be judged: about a second at the default 2 ms.
	minPINGs = 500
)

type block struct {
	n uint64
	b [nBuckets]uint32
}

func (b *block) count(us int64) {
	b.b[bucketOf(us)]++
	b.n++
}

func (b *block) add(o *block) {
	if o.n == 0 {
		return
	}
	for i, v := range o.b {
		b.b[i] += v
	}
	b.n += o.n
}

func (b *block) reset() { *b = block{} }

// bucketOf is the bucket of us microseconds: 1 to 7 µs each their own, then
// four buckets a doubling, split evenly.
func bucketOf(us int64) int {
	if us < 1 {
		us = 1
	}
	if us < 8 {
		return int(us)
	}
	e := bits.Len64(uint64(us)) - 1 // us in [2^e, 2^(e+1))
	i := 4*(e-1) + int(us>>(e-2)&3)
	return min(i, nBuckets-1)
}

// bucketTop is the largest round trip bucket i holds, in µs: the value a
// quantile in it is given, so that the normal is never under-stated.
func bucketTop(i int) int64 {
	if i < 8 {
		return int64(i)
	}
	e := i/4 + 1
	return (int64(5+i%4) << (e - 2)) - 1
}

// Interval counts one closed interval of the probe: its round trips (µs),
// those above the rule's bar left out, ending at end (the probe's clock,
// ns). The PING interval ivUS, which the probe corrects its own figures
// with, is not used: see Baseline.
func (b *Baseline) Interval(end int64, rtts []int64, ivUS int64) {
	b.blocks[b.head].add(&b.last)
	b.last.reset()
	switch {
	case !b.began:
		b.began, b.start = true, end
	case end-b.start >= int64(blockSpan):
		// One block on for each span passed; a gap of a minute or more
		// (the server was unreachable) starts the minute afresh.
		steps := min((end-b.start)/int64(blockSpan), int64(nBlocks))
		for range steps {
			b.head = (b.head + 1) % nBlocks
			b.blocks[b.head].reset()
		}
		b.start += (end - b.start) / int64(blockSpan) * int64(blockSpan)
	}
	_, bar, judged := b.Threshold()
	barUS := int64(bar / time.Microsecond)
	for _, us := range rtts {
		if judged && us > barUS {
			continue // a spike: not normal
		}
		b.last.count(us)
	}
}

// Normal is the p99 of the round trips counted before the last interval,
// within the minute (the top of its bucket); false until minPINGs were.
func (b *Baseline) Normal() (time.Duration, bool) {
	var n uint64
	for i := range b.blocks {
		n += b.blocks[i].n
	}
	if n < minPINGs {
		return 0, false
	}
	need := (n*99 + 99) / 100 // the smallest count holding 99 %
	var seen uint64
	for i := range nBuckets {
		for j := range b.blocks {
			seen += uint64(b.blocks[j].b[i])
		}
		if seen >= need {
			return time.Duration(bucketTop(i)) * time.Microsecond, true
		}
	}
	return time.Duration(bucketTop(nBuckets-1)) * time.Microsecond, true
}

// Threshold is the spike rule's bar now: SpikeFactor times Normal, at
// least SpikeFloor; false until the minute holds minPINGs round trips.
func (b *Baseline) Threshold() (normal, threshold time.Duration, ok bool) {
	normal, ok = b.Normal()
	if !ok {
		return 0, 0, false
	}
	return normal, max(source.SpikeFactor*normal, source.SpikeFloor), true
}

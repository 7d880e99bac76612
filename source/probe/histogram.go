package probe

import (
	"math"
	"sort"
	"sync/atomic"
	"time"
)

// Histogram counts a probe's round trips since it was made, for an
// exporter to serve as a Prometheus histogram, of which any window's
// quantiles can be taken (Summary's figures are of the last interval and
// the last 10 s only). The buckets are those of a Prometheus native
// histogram of schema 3: eight a doubling, each 2^(1/8) = 9 % wider than
// the one below, bucket i holding the round trips in (2^((i-1)/8),
// 2^(i/8)] seconds, over the probe's whole range (1 µs to 60 s). The
// round trips are counted as Summary's are: in whole microseconds, and
// corrected for coordinated omission (a PING that took longer than the
// interval counts the PINGs due meanwhile too).
//
// Counting costs one bucket search among eight bounds and two atomic
// additions per PING, under the probe's lock it already holds; reading
// (Snapshot) may happen at any time from any goroutine.
type Histogram struct {
	created time.Time
	sumUS   atomic.Int64
	buckets [histBuckets]atomic.Uint64
}

// HistogramSchema is the native histogram schema of Histogram's buckets.
const HistogramSchema = 3

const (
	// histMinKey and histMaxKey are the bucket indexes of the probe's
	// lowest and highest round trip (1 µs and 60 s, see probeHistLowest
	// and probeHistHighest).
	histMinKey  = -159
	histMaxKey  = 48
	histBuckets = histMaxKey - histMinKey + 1
)

// histBounds are the lower bounds, as fractions in [0.5, 1) of a power of
// two, of the eight buckets of a doubling (the mantissas math.Frexp gives).
var histBounds = func() [1 << HistogramSchema]float64 {
	var b [1 << HistogramSchema]float64
	for j := range b {
		b[j] = 0.5 * math.Exp2(float64(j)/float64(len(b)))
	}
	return b
}()

// NewHistogram returns an empty Histogram made now.
func NewHistogram() *Histogram { return &Histogram{created: time.Now()} }

// BucketOf is the index of the native histogram bucket (schema 3) that
// holds us microseconds.
func BucketOf(us int64) int {
	frac, exp := math.Frexp(float64(us) / 1e6)
	return sort.SearchFloat64s(histBounds[:], frac) + (exp-1)*len(histBounds)
}

// add counts one round trip of us microseconds (within the probe's
// range) and, when it took longer than the interval ivUS, the PINGs that
// were due meanwhile, as HdrHistogram's RecordCorrectedValue does.
func (h *Histogram) add(us, ivUS int64) {
	h.count(us)
	if ivUS <= 0 {
		return
	}
	for missing := us - ivUS; missing >= ivUS; missing -= ivUS {
		h.count(missing)
	}
}

func (h *Histogram) count(us int64) {
	h.buckets[BucketOf(us)-histMinKey].Add(1)
	h.sumUS.Add(us)
}

// HistogramSnapshot is a Histogram as it stood when read.
type HistogramSnapshot struct {
	// Created is when the histogram began to count.
	Created time.Time
	// Count is the round trips counted, the sum of Buckets; Sum their
	// total (read a moment apart from the buckets: it may count a round
	// trip more or less than they do).
	Count uint64
	Sum   time.Duration
	// Buckets are the counts by bucket index, without the empty ones.
	Buckets map[int]int64
}

// Snapshot reads h.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Created: h.created, Buckets: map[int]int64{}}
	for i := range h.buckets {
		if n := h.buckets[i].Load(); n > 0 {
			s.Buckets[i+histMinKey] = int64(n)
			s.Count += n
		}
	}
	s.Sum = time.Duration(h.sumUS.Load()) * time.Microsecond
	return s
}

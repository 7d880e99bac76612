package probe

import (
	"math"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
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
// Nothing is added to a PING's path: Summary, which already walks the
// closed interval's round trips for the rolling window, counts them in
// too (a bucket search among eight bounds and an addition each), under
// the histogram's lock, which Snapshot takes from any goroutine. The
// counts are as of the probe's last Summary.
type Histogram struct {
	created time.Time

	mu      sync.Mutex
	sumUS   int64
	buckets [histBuckets]uint64
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
// holds us microseconds (at least 1): client_golang's own computation
// (math.Frexp, then the first bound at or above the mantissa), written out
// for a number it knows to be normal and positive, without a call.
func BucketOf(us int64) int {
	bits := math.Float64bits(float64(us) / 1e6)
	exp := int(bits>>52&0x7ff) - 1022 // v = frac * 2^exp, frac in [0.5, 1)
	frac := math.Float64frombits(bits&^(0x7ff<<52) | 1022<<52)
	lo, hi := 0, len(histBounds)
	for lo < hi {
		if mid := (lo + hi) / 2; histBounds[mid] < frac {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo + (exp-1)*len(histBounds)
}

// countInterval counts the round trips of a closed interval: its log, or
// where the log overflowed, its HdrHistogram (corrected already), each of
// whose buckets (1 % wide) is counted at its highest value. A nil h counts
// nothing.
func (h *Histogram) countInterval(s *probeSlot, closed *hdrhistogram.Histogram) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.overflow {
		for _, b := range closed.Distribution() {
			if b.Count > 0 {
				h.buckets[BucketOf(b.To)-histMinKey] += uint64(b.Count)
				h.sumUS += b.Count * b.To
			}
		}
		return
	}
	for _, us := range s.rtts {
		h.count(us)
		if s.ivUS <= 0 {
			continue
		}
		// The PINGs a slow one held up, as RecordCorrectedValue adds them.
		for missing := us - s.ivUS; missing >= s.ivUS; missing -= s.ivUS {
			h.count(missing)
		}
	}
}

func (h *Histogram) count(us int64) {
	h.buckets[BucketOf(us)-histMinKey]++
	h.sumUS += us
}

// HistogramSnapshot is a Histogram as it stood when read.
type HistogramSnapshot struct {
	// Created is when the histogram began to count.
	Created time.Time
	// Count is the round trips counted, the sum of Buckets; Sum their
	// total.
	Count uint64
	Sum   time.Duration
	// Buckets are the counts by bucket index, without the empty ones.
	Buckets map[int]int64
}

// Snapshot reads h.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Created: h.created, Buckets: map[int]int64{}}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, n := range h.buckets {
		if n > 0 {
			s.Buckets[i+histMinKey] = int64(n)
			s.Count += n
		}
	}
	s.Sum = time.Duration(h.sumUS) * time.Microsecond
	return s
}

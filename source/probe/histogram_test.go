package probe

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vkwatch/vkwatch/source"
)

// BucketOf puts a round trip in the bucket client_golang's own native
// histogram of schema 3 puts it in, over the probe's whole range: the
// exporter serves these counts as that histogram's.
func TestBucketOfIsClientGolangs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []int64{probeHistLowest, 2, 3, 61, 1000, 1024, 999_999, 1_000_000, 1_000_001, probeHistHighest}
	for range 2000 {
		// Spread over every doubling of the range.
		values = append(values, int64(float64(probeHistHighest)/float64(int64(1)<<rng.IntN(26))*rng.Float64())+1)
	}
	for _, us := range values {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x", NativeHistogramBucketFactor: 1.1})
		h.Observe(float64(us) / 1e6)
		var m dto.Metric
		if err := h.Write(&m); err != nil {
			t.Fatal(err)
		}
		hg := m.GetHistogram()
		if hg.GetSchema() != HistogramSchema {
			t.Fatalf("client_golang chose schema %d for factor 1.1, want %d", hg.GetSchema(), HistogramSchema)
		}
		want := int(hg.GetPositiveSpan()[0].GetOffset())
		if got := BucketOf(us); got != want {
			t.Errorf("%d µs: bucket %d, client_golang's %d", us, got, want)
		}
		if k := BucketOf(us); k < histMinKey || k > histMaxKey {
			t.Errorf("%d µs: bucket %d outside [%d, %d]", us, k, histMinKey, histMaxKey)
		}
	}
}

// The histogram counts what the probe's own HdrHistogram records, at each
// Summary: every round trip and the PINGs a slow one held up, the same
// number of each.
func TestHistogramCountsAsTheProbe(t *testing.T) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	h := NewHistogram()
	p.CountInto(h)
	rng := rand.New(rand.NewPCG(5, 6))
	var sumUS, want int64
	for range 5 {
		for range 100 {
			rtt := time.Duration(rng.ExpFloat64()*300) * time.Microsecond
			if rng.IntN(50) == 0 {
				rtt = time.Duration(rng.IntN(600)) * time.Millisecond // a stall
			}
			p.record(rtt, 0, false)
			us := min(max(int64(rtt/time.Microsecond), probeHistLowest), probeHistHighest)
			for v := us; v == us || v >= 2000; v -= 2000 {
				sumUS += v
			}
		}
		cur := curCount(p)
		want += cur
		if s := h.Snapshot(); int64(s.Count) != want-cur {
			t.Fatalf("counted %d before the interval's Summary, want %d", s.Count, want-cur)
		}
		p.Summary()
	}
	s := h.Snapshot()
	if int64(s.Count) != want {
		t.Errorf("histogram counts %d, the probe's HdrHistogram %d", s.Count, want)
	}
	var n int64
	for _, c := range s.Buckets {
		n += c
	}
	if n != int64(s.Count) {
		t.Errorf("buckets hold %d, Count says %d", n, s.Count)
	}
	if s.Sum != time.Duration(sumUS)*time.Microsecond {
		t.Errorf("sum %v, want %v", s.Sum, time.Duration(sumUS)*time.Microsecond)
	}
	if s.Created.IsZero() || time.Since(s.Created) > time.Minute {
		t.Errorf("created %v", s.Created)
	}
}

// An interval with more round trips than its log holds (the sampler
// waiting on a slow INFO while PINGs are answered) is counted from its
// HdrHistogram: every round trip still counts, each in the bucket of its
// HdrHistogram bucket's highest value (within 1 %).
func TestHistogramCountsAnOverflowedInterval(t *testing.T) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	h := NewHistogram()
	p.CountInto(h)
	const n = probeSlotLog + 1000
	for i := range n {
		p.record(time.Duration(100+i%50)*time.Microsecond, 0, false)
	}
	p.Summary()
	s := h.Snapshot()
	if s.Count != n {
		t.Errorf("counted %d of %d round trips", s.Count, n)
	}
	for k := range s.Buckets {
		if lo, hi := BucketOf(100), BucketOf(151); k < lo || k > hi {
			t.Errorf("bucket %d outside %d..%d (100 to 150 µs, 1 %% up)", k, lo, hi)
		}
	}
}

// BenchmarkProbeSummaryCounted is BenchmarkProbeSummary with the
// exporter's histogram counting the interval's 100 PINGs too (--metrics):
// what it adds to the sampler's work, a PING's path being untouched.
//
//	go test ./source/probe -run '^$' -bench 'ProbeSummary' -count 10
func BenchmarkProbeSummaryCounted(b *testing.B) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	p.CountInto(NewHistogram())
	benchSummary(b, p)
}

// curCount is how many round trips the interval being recorded holds,
// corrections included, as its summary will count them.
func curCount(p *Probe) int64 {
	h := newProbeHist()
	s := *p.cur
	s.ivUS = p.intervalUS()
	s.addTo(h)
	return h.TotalCount()
}

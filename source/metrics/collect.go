package metrics

import (
	"math"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/probe"
)

// Describe sends every series' description.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect sends the latest value of every series. An absent figure (a
// field an older server lacks, an instrument that cannot read) is left
// out, never sent as 0.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	gauge(ch, descBuild, 1, e.build[:]...)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range e.servedLocked() {
		n := e.nodes[id]
		e.collectNode(ch, id, n)
		if h := e.hists[id]; h != nil {
			ch <- pingMetric(h.Snapshot(), n.addr)
		}
		collectSaves(ch, n)
	}
}

// servedLocked are the nodes to serve, in order: one per address, the
// connected one where two share it (a cluster node replaced at the same
// address, the old one not forgotten yet), so that addr alone names a
// series.
func (e *Exporter) servedLocked() []source.NodeID {
	ids := make([]source.NodeID, 0, len(e.nodes))
	for id := range e.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	byAddr := map[string]source.NodeID{}
	out := ids[:0]
	for _, id := range ids {
		n := e.nodes[id]
		prev, dup := byAddr[n.addr]
		switch {
		case !dup:
			byAddr[n.addr] = id
			out = append(out, id)
		case n.connected && !e.nodes[prev].connected:
			byAddr[n.addr] = id
			out[slices.Index(out, prev)] = id
		}
	}
	return out
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lv ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (e *Exporter) collectNode(ch chan<- prometheus.Metric, id source.NodeID, n *node) {
	a := n.addr
	gauge(ch, descUp, b2f(n.connected), a)
	if iv := e.intervalOf(id); iv > 0 {
		gauge(ch, descPingInterval, iv.Seconds(), a)
	}
	if n.observerSeen {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(descObserver, prometheus.CounterValue, n.observer, n.created, a)
	}
	if !n.seen {
		return
	}
	if v, ok := n.footprint.Get(); ok {
		gauge(ch, descFootprint, float64(v), a, string(n.footprintFrom))
	}
	if v, ok := n.cow.Get(); ok {
		gauge(ch, descCOW, float64(v), a, string(n.cowFrom))
	}
	gauge(ch, descSaving, b2f(n.save != nil), a)
	if p := n.save; p != nil {
		j := jobOf(p.Kind)
		lv := []string{a, j.kind, j.method, triggerLabel(p.Trigger.Kind)}
		if f, ok := p.Fraction().Get(); ok {
			gauge(ch, descProgress, f, lv...)
		}
		if eta, ok := p.ETA.Get(); ok {
			gauge(ch, descETA, eta.Seconds(), lv...)
		}
		gauge(ch, descElapsed, p.Elapsed.Seconds(), lv...)
		if d, ok := n.stalled.Get(); ok {
			gauge(ch, descStalled, d.Seconds(), lv...)
		}
	}
	collectForecast(ch, n)
}

// collectForecast sends the next fork save's forecast and its memory
// check against every limit vkwatch could read.
func collectForecast(ch chan<- prometheus.Metric, n *node) {
	fc, ok := n.forecast.Get()
	if !ok {
		return
	}
	gauge(ch, descForecast, float64(fc.COW), n.addr)
	for _, b := range bases {
		gauge(ch, descBasis, b2f(fc.Basis == b.basis), n.addr, b.label)
	}
	if fc.Basis == forecast.Forkless {
		return
	}
	for _, c := range n.fork.Checks {
		l := limitLabel(c.Limit)
		gauge(ch, descHeadroom, float64(c.Headroom), n.addr, l)
		gauge(ch, descLimit, float64(c.Cap.Bytes), n.addr, l)
	}
}

// collectSaves sends the counters of finished saves and the latest of
// each kind.
func collectSaves(ch chan<- prometheus.Metric, n *node) {
	for j, counts := range n.saves {
		for i, c := range counts {
			ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(descSaves, prometheus.CounterValue, c, n.created, n.addr, j.kind, j.method, statuses[i])
		}
	}
	for j, r := range n.last {
		collectReport(ch, n.addr, j, r)
	}
	for i, c := range n.spikes {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(descSpikes, prometheus.CounterValue, c, n.created, n.addr, string(causes[i]))
	}
}

func collectReport(ch chan<- prometheus.Metric, addr string, j job, r *source.SaveReport) {
	lv := []string{addr, j.kind, j.method}
	status := statusLabel(r.Status)
	for _, s := range statuses {
		gauge(ch, descLastStatus, b2f(s == status), addr, j.kind, j.method, s)
	}
	if v, ok := r.COW.Get(); ok {
		gauge(ch, descLastCOW, float64(v), lv...)
	}
	// The peak and the rise are read by the instrument of the samples
	// during the save.
	if v, ok := r.PeakCOW.Get(); ok {
		gauge(ch, descLastPeak, float64(v), append(lv, string(r.PeakCOWFrom))...)
	}
	if v, ok := r.PeakFootprintDelta.Get(); ok {
		in := source.FromInfo
		if r.PeakChildPrivateDirty.OK {
			in = source.FromProc
		}
		gauge(ch, descLastRise, float64(v), append(lv, string(in))...)
	}
	if v, ok := r.ForkPause.Get(); ok {
		gauge(ch, descLastFork, v.Seconds(), lv...)
	}
	gauge(ch, descLastDur, r.Observed.Seconds(), lv...)
	if !r.StartedAt.IsZero() {
		end := r.StartedAt.Add(r.Ended - r.Started)
		gauge(ch, descLastEnd, float64(end.UnixNano())/1e9, lv...)
	}
	if r.PingDuring.Count > 0 {
		gauge(ch, descLastPing, r.PingDuring.Worst().Seconds(), lv...)
	}
	if r.PingDuring.Interval > 0 {
		gauge(ch, descLastPingI, r.PingDuring.Interval.Seconds(), lv...)
	}
}

// classicBounds are the classic buckets' upper bounds of
// vkwatch_ping_duration_seconds, as native bucket indexes: powers of two
// from 2^-15 s (31 µs) to 2^4 s (16 s), each the upper bound of every
// eighth native bucket, so that each classic count is the exact sum of
// native ones.
var classicBounds = func() []int {
	var out []int
	for p := -15; p <= 4; p++ {
		out = append(out, p<<probe.HistogramSchema)
	}
	return out
}()

// pingMetric is a node's PING histogram as one Prometheus histogram with
// both native buckets (for a Prometheus that scrapes them) and classic
// ones (for one that does not).
func pingMetric(s probe.HistogramSnapshot, addr string) prometheus.Metric {
	m := prometheus.MustNewConstNativeHistogram(descPing, s.Count, s.Sum.Seconds(), s.Buckets, nil, 0,
		probe.HistogramSchema, 0, s.Created, addr)
	out := &dto.Metric{}
	if err := m.Write(out); err != nil {
		return prometheus.NewInvalidMetric(descPing, err)
	}
	var below uint64
	keys := make([]int, 0, len(s.Buckets))
	for k := range s.Buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	i := 0
	for _, b := range classicBounds {
		for ; i < len(keys) && keys[i] <= b; i++ {
			below += uint64(s.Buckets[keys[i]])
		}
		out.Histogram.Bucket = append(out.Histogram.Bucket, &dto.Bucket{
			CumulativeCount: new(below),
			UpperBound:      new(bucketBound(b)),
		})
	}
	return written{desc: descPing, m: out}
}

// bucketBound is the upper bound in seconds of native bucket k.
func bucketBound(k int) float64 {
	return math.Exp2(float64(k) / float64(int(1)<<probe.HistogramSchema))
}

// written is a metric as Write gives it.
type written struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (w written) Desc() *prometheus.Desc { return w.desc }

func (w written) Write(out *dto.Metric) error {
	out.Label, out.Histogram = w.m.Label, w.m.Histogram
	return nil
}

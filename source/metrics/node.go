package metrics

import (
	"slices"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
)

// node is what the exporter keeps of one server: a few numbers and the
// latest report of each kind of save, never the samples themselves, so a
// scrape costs the same however long vkwatch ran.
type node struct {
	addr      string
	created   time.Time // when the exporter first heard of it: its counters' start
	connected bool
	seen      bool // a sample arrived

	footprint     source.Opt[int64]
	footprintFrom source.Instrument
	cow           source.Opt[int64]
	cowFrom       source.Instrument

	save    *source.SaveProgress // nil when none runs
	stalled source.Opt[time.Duration]

	// fc forecasts the next fork save from the samples; forecast and
	// fork are its forecast and the memory check of a fork save, as of
	// the latest sample with no save running (a check during a save
	// would count the running child's copy-on-write twice).
	fc       forecast.Node
	forecast source.Opt[forecast.Forecast]
	fork     risk.Fork
	latest   *source.SaveReport // the latest finished save, of any kind

	last  map[job]*source.SaveReport // the latest finished save of each kind
	saves map[job][]float64          // finished saves by status (statuses' order)
	// spikes counts PING spikes by cause (source.CauseKinds' order).
	spikes []float64

	// observer is vkwatch's cost on the server so far (seconds), over
	// every watch of it: a watch's own figure starts again at 0 when its
	// watcher does (observerLast is the current watch's), and the counter
	// goes on from where it stood.
	observer, observerLast float64
	observerSeen           bool
}

func newNode(addr string) *node {
	n := &node{addr: addr, created: time.Now(), last: map[job]*source.SaveReport{}, saves: map[job][]float64{},
		spikes: make([]float64, len(causes))}
	n.count(forkSave)
	n.count(aofRewrite)
	return n
}

// count makes j's counters exist, every status at 0 until a save of j
// ends with it: a counter that appears at 1 hides its first increase
// from rate() and increase().
func (n *node) count(j job) []float64 {
	c := n.saves[j]
	if c == nil {
		c = make([]float64, len(statuses))
		n.saves[j] = c
	}
	return c
}

func (n *node) sample(s *source.Sample) {
	n.seen, n.connected = true, true
	n.observe(s.Observer)
	n.footprint, n.footprintFrom = s.Footprint, s.FootprintFrom
	n.cow, n.cowFrom = s.COW, s.COWFrom
	if s.Config.Method == "forkless" || s.Config.ForklessInfra.V {
		n.count(forklessJob)
	}
	n.fc.Observe(s)
	n.save, n.stalled = nil, source.Opt[time.Duration]{}
	if s.Save != nil {
		p := s.Save.WithoutCurve()
		n.save = &p
		n.count(jobOf(p.Kind))
		if d, ok := n.fc.Stalled(); ok {
			n.stalled = source.Some(d)
		}
		return
	}
	f, ok := n.fc.Forecast()
	n.forecast = source.Opt[forecast.Forecast]{V: f, OK: ok}
	n.fork = risk.Assess(risk.Input{Sample: s, Last: n.latest, Forecast: forecast.RiskFigure(n.forecast)})
}

func (n *node) report(r source.SaveReport) {
	r.Curve = nil // never served: not kept
	n.fc.Learn(&r)
	j := jobOf(r.Kind)
	n.last[j] = &r
	n.latest = &r
	n.count(j)[indexOf(statusLabel(r.Status))]++
	n.save, n.stalled = nil, source.Opt[time.Duration]{}
}

func indexOf(status string) int {
	for i, s := range statuses {
		if s == status {
			return i
		}
	}
	return len(statuses) - 1
}

// causes are the values of vkwatch_ping_spikes_total's cause label.
var causes = source.CauseKinds()

// spike counts a spike once under each of its causes.
func (n *node) spike(sp *source.Spike) {
	for _, c := range sp.Causes {
		if i := slices.Index(causes, c.Kind); i >= 0 {
			n.spikes[i]++
		}
	}
}

// observe follows Sample.Observer's seconds into the counter.
func (n *node) observe(o source.ObserverCost) {
	v, ok := o.Seconds.Get()
	if !ok {
		return
	}
	if v < n.observerLast {
		n.observerLast = 0 // a new watch of the node
	}
	n.observer += v - n.observerLast
	n.observerLast, n.observerSeen = v, true
}

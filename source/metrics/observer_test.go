package metrics

import (
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// vkwatch_observer_seconds_total goes on from where it stood when a new
// watch of the node starts its own figure again at 0, and an absent figure
// is no reading.
func TestObserverCounterAcrossWatches(t *testing.T) {
	n := newNode("127.0.0.1:6379")
	for _, v := range []source.Opt[float64]{{}, source.Some(0.5), source.Some(1.5), {}, source.Some(0.25), source.Some(1.0)} {
		n.observe(source.ObserverCost{Seconds: v})
	}
	if !n.observerSeen || n.observer != 2.5 {
		t.Errorf("counter %v (seen %v), want 1.5 + 1.0 = 2.5", n.observer, n.observerSeen)
	}
	m := newNode("x")
	if m.observe(source.ObserverCost{}); m.observerSeen {
		t.Error("a node without a reading has the series")
	}
}

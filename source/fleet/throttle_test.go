package fleet

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/watch"
)

// A node whose watching costs more than the limit has its intervals at
// rest doubled at each reading over it, halved again once under a quarter
// of it, and the topology says so; the other nodes keep theirs.
func TestThrottleByObserverCost(t *testing.T) {
	f := newFleet(Config{MaxObserverShare: 0.01})
	f.topo.PingInterval = 100 * time.Millisecond
	for _, id := range []source.NodeID{"a", "b"} {
		f.watchers[id] = &running{w: watch.New(id, source.Endpoint{Addr: "127.0.0.1:1"}, nil, watch.Config{}), interval: 100 * time.Millisecond}
		f.members[id] = Member{ID: id}
	}
	f.setTopologyLocked(source.Topology{Shards: []source.Shard{{Nodes: []source.TopologyNode{{ID: "a"}, {ID: "b"}}}}})
	f.eps["a"], f.eps["b"] = source.Endpoint{}, source.Endpoint{}
	cold := f.topo.PingInterval
	reading := func(share float64, at time.Duration) {
		f.throttle(source.Event{Node: "a", Kind: source.EventSample, Sample: &source.Sample{
			Observer: source.ObserverCost{Share: source.Some(share), ReadAt: at}}})
	}
	for i, c := range []struct {
		share  float64
		factor int
	}{{0.05, 2}, {0.05, 4}, {0.05, 4}, {0.006, 4}, {0.001, 2}, {0.001, 1}} {
		at := time.Duration(i+1) * time.Minute
		if i == 2 {
			at = 2 * time.Minute // the same reading again: nothing new
		}
		reading(c.share, at)
		if got := f.watchers["a"].w.PingInterval(); got != cold*time.Duration(c.factor) {
			t.Errorf("reading %d (%.1f%%): PING every %s, want %s", i, 100*c.share, got, cold*time.Duration(c.factor))
		}
		if got := f.watchers["a"].w.Interval(); got != f.restSampling()*time.Duration(c.factor) {
			t.Errorf("reading %d: INFO every %s, want x%d", i, got, c.factor)
		}
		if th := f.topo.Throttled; (c.factor > 1) != (len(th) == 1) || len(th) == 1 && th[0].Node != "a" {
			t.Errorf("reading %d: topology's throttled %+v", i, th)
		}
		if got := f.watchers["b"].w.PingInterval(); got != cold {
			t.Errorf("the other node's PING every %s, want %s", got, cold)
		}
	}
}

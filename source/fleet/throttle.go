package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// A node whose watching costs it more than Config.MaxObserverShare of its
// main thread (Sample.Observer's share, priced about once a minute) has
// its intervals at rest doubled, PING and INFO, up to maxSlow times; once
// it costs less than a quarter of the limit they are halved again. A node
// in attention (a save running or coming) keeps its fine PINGs: a fork's
// pause is what they are for, and a save is short.
const maxSlow = 64

// slowNode is a throttled node: how many times its intervals at rest are,
// why, and the reading that last set it.
type slowNode struct {
	factor int
	reason string
	readAt time.Duration
}

// throttle follows each new reading of a node's cost.
func (f *Fleet) throttle(ev source.Event) {
	max := f.cfg.MaxObserverShare
	if max <= 0 || ev.Kind != source.EventSample || ev.Sample == nil {
		return
	}
	o := ev.Sample.Observer
	share, ok := o.Share.Get()
	if !ok {
		return
	}
	f.mu.Lock()
	sn := f.slow[ev.Node]
	if sn.readAt == o.ReadAt && sn.factor != 0 {
		f.mu.Unlock()
		return // this reading was seen
	}
	sn.readAt = o.ReadAt
	factor := max1(sn.factor)
	switch {
	case share > max && factor < maxSlow:
		factor *= 2
	case share < max/4 && factor > 1:
		factor /= 2
	}
	changed := factor != max1(sn.factor)
	sn.factor = factor
	sn.reason = fmt.Sprintf("watching took %.2f%% of its main thread (--max-observer-cost %.2f%%): intervals at rest x%d",
		100*share, 100*max, factor)
	f.slow[ev.Node] = sn
	if !changed {
		f.mu.Unlock()
		return
	}
	f.retimeUnlock()
}

func max1(n int) int { return max(n, 1) }

// slowOfLocked is how many times id's intervals at rest are.
func (f *Fleet) slowOfLocked(id source.NodeID) int { return max1(f.slow[id].factor) }

// throttledLocked are the throttled nodes watched, for the topology.
func (f *Fleet) throttledLocked(cold time.Duration) []source.Attended {
	var out []source.Attended
	for id, sn := range f.slow {
		if sn.factor > 1 && f.watchers[id] != nil {
			out = append(out, source.Attended{Node: id, Addr: f.members[id].Endpoint.String(),
				Reason: sn.reason, Interval: cold * time.Duration(sn.factor)})
		}
	}
	slices.SortFunc(out, func(a, b source.Attended) int { return strings.Compare(string(a.Node), string(b.Node)) })
	return out
}

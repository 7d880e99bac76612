package record

import (
	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/saves"
)

// Reports re-derives the save reports from a recording's samples, feeding
// them in recorded order to a saves.Tracker per server and watcher run,
// as the watcher did live. A replay that
// reproduces the live run gives the reports its EventSaveEnded events held.
func Reports(rec *Recording) []source.SaveReport {
	trackers := map[source.NodeID]*saves.Tracker{}
	addrs := map[source.NodeID]string{}
	for _, si := range rec.Header.Servers {
		addrs[si.Node] = si.Addr
	}
	tracker := func(ev *source.Event, fresh bool) *saves.Tracker {
		tr := trackers[ev.Node]
		if tr == nil || fresh {
			addr, ok := addrs[ev.Node]
			if !ok {
				addr = string(ev.Node)
			}
			tr = saves.NewTracker(ev.Node, addr)
			trackers[ev.Node] = tr
		}
		return tr
	}
	var out []source.SaveReport
	for i := range rec.Events {
		ev := &rec.Events[i]
		switch {
		case ev.Kind == source.EventCommand && ev.Command != nil:
			// The watcher showed each answer to its tracker where the
			// recording has it: before the samples that follow.
			c := *ev.Command
			tracker(ev, false).ObserveCommand(&c)
		case ev.Kind == source.EventSample && ev.Sample != nil:
			// Seq starts at 0 with every Run of a watcher, and each Run
			// has a tracker of its own (bench runs one watcher per run); a
			// reconnect within a Run keeps both Seq and tracker going.
			tr := tracker(ev, ev.Sample.Seq == 0)
			// The tracker may fill in the sample; leave the recording as read.
			s := *ev.Sample
			if s.Save != nil {
				p := *s.Save
				s.Save = &p
			}
			if _, ended := tr.Observe(&s); ended != nil {
				out = append(out, *ended)
			}
		}
	}
	return out
}

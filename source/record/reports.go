package record

import "github.com/vkwatch/vkwatch/source"

// Reports re-derives the save reports from a recording's samples, feeding
// them in recorded order to a source.SaveTracker per server and watcher run,
// as the watcher did live. A replay that
// reproduces the live run gives the reports its EventSaveEnded events held.
func Reports(rec *Recording) []source.SaveReport {
	trackers := map[int]*source.SaveTracker{}
	var out []source.SaveReport
	for _, ev := range rec.Events {
		if ev.Kind != source.EventSample || ev.Sample == nil {
			continue
		}
		tr := trackers[ev.Server]
		// Seq starts at 0 with every Run of a watcher, and each Run has a
		// tracker of its own (bench runs one watcher per run); a reconnect
		// within a Run keeps both Seq and tracker going.
		if tr == nil || ev.Sample.Seq == 0 {
			addr := ""
			if ev.Server >= 0 && ev.Server < len(rec.Header.Servers) {
				addr = rec.Header.Servers[ev.Server].Addr
			}
			tr = source.NewSaveTracker(ev.Server, addr)
			trackers[ev.Server] = tr
		}
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
	return out
}

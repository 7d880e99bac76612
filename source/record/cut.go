package record

import (
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// Summary is what a recording holds, read in one streaming pass.
type Summary struct {
	Header Header
	// Servers are the header's, then those that joined later (named by a
	// topology or connected event), in the order first seen.
	Servers []ServerInfo
	// First and Last are the offsets of the earliest and latest event.
	First, Last time.Duration
	Events      int
	Samples     int
	// Saves are the reports of the saves that ended while recording, as
	// the live run wrote them, in order.
	Saves []source.SaveReport
	// Truncated and Why: the recording ended cut short.
	Truncated bool
	Why       string
}

// Summarize reads the recording r through once.
func Summarize(r io.Reader) (*Summary, error) {
	sc, err := NewScanner(r)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	s := &Summary{Header: sc.Header()}
	seen := map[source.NodeID]bool{}
	add := func(si ServerInfo) {
		if si.Node != "" && !seen[si.Node] {
			seen[si.Node] = true
			if si.Addr == "" {
				si.Addr = string(si.Node)
			}
			s.Servers = append(s.Servers, si)
		}
	}
	for _, si := range s.Header.Servers {
		add(si)
	}
	for ev, err := range sc.Events() {
		if err != nil {
			return s, err
		}
		if s.Events == 0 || ev.Offset < s.First {
			s.First = ev.Offset
		}
		s.Last = max(s.Last, ev.Offset)
		s.Events++
		switch {
		case ev.Kind == source.EventSample:
			s.Samples++
		case ev.Kind == source.EventSaveEnded && ev.Report != nil:
			s.Saves = append(s.Saves, *ev.Report)
		case ev.Topology != nil:
			for _, n := range ev.Topology.Nodes() {
				add(ServerInfo{Node: n.ID, Addr: n.Addr})
			}
		case ev.Identity != nil:
			add(ServerInfo{Node: ev.Node, Addr: ev.Identity.Addr, Identity: ev.Identity})
		}
		if ev.Kind != source.EventTopology {
			add(ServerInfo{Node: ev.Node})
		}
	}
	s.Truncated, s.Why = sc.Truncated()
	return s, nil
}

// Window is a span of a recording by event offset, both ends included.
type Window struct{ From, To time.Duration }

// SaveWindow is the window of a save with margin either side: the margin
// must hold the seconds before the save that its report's "before" figures
// and its fork pause are measured against (5 s and one sample).
func SaveWindow(r source.SaveReport, margin time.Duration) Window {
	return Window{From: r.Started - margin, To: r.Ended + margin}
}

// Cut writes the events of the recording src within win to dst as a
// recording of its own (compressed as c), with the original's header, so
// its times stay the original's. What was known at the window's start is
// carried in, stamped at the window's first event: the last topology and
// each node's last connected or disconnected event, so the cut replays
// with its fleet and its servers' identities. It returns how many events it
// wrote.
func Cut(src io.Reader, dst io.Writer, c Compression, win Window) (int, error) {
	sc, err := NewScanner(src)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	h := sc.Header()
	h.Settings = maps.Clone(h.Settings)
	if h.Settings == nil {
		h.Settings = map[string]string{}
	}
	h.Settings["cut"] = fmt.Sprintf("%s..%s", seconds(win.From), seconds(win.To))
	w, err := NewWriter(dst, h, Options{Compression: c})
	if err != nil {
		return 0, err
	}
	defer w.Close() // after an error; the last Close is below
	win2 := newWindower(win)
	n := 0
	for ev, err := range sc.Events() {
		if err != nil {
			return n, err
		}
		for _, ev := range win2.take(ev) {
			if err := w.Write(ev); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, w.Close()
}

// windower picks the events of a window out of a recording read in order,
// carrying in what was known at its start (see Cut).
type windower struct {
	win      Window
	topology *source.Event
	conn     map[source.NodeID]source.Event
	order    []source.NodeID
	started  bool
	out      []source.Event
}

func newWindower(win Window) *windower {
	return &windower{win: win, conn: map[source.NodeID]source.Event{}}
}

// take returns the events to keep for ev, in order: none, ev, or (at the
// window's first event) what is carried in and then ev. The slice is
// reused by the next call.
func (w *windower) take(ev source.Event) []source.Event {
	w.out = w.out[:0]
	if ev.Offset < w.win.From {
		switch ev.Kind {
		case source.EventTopology:
			w.topology = &ev
		case source.EventConnected, source.EventDisconnected:
			if _, ok := w.conn[ev.Node]; !ok {
				w.order = append(w.order, ev.Node)
			}
			w.conn[ev.Node] = ev
		}
		return nil
	}
	if ev.Offset > w.win.To {
		return nil // events arrive in about offset order, not exactly
	}
	if !w.started {
		w.started = true
		if w.topology != nil {
			w.out = append(w.out, *w.topology)
		}
		for _, id := range w.order {
			w.out = append(w.out, w.conn[id])
		}
		for i := range w.out {
			w.out[i].Offset, w.out[i].At = ev.Offset, ev.At
		}
	}
	return append(w.out, ev)
}

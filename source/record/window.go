package record

import (
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// WindowSource streams a recording file to a replay, within a window: it
// is the ui's ReplaySource of a file (vkwatch replay's and the ui's tests'
// of a real recording).
type WindowSource struct {
	F   *File
	Win Window
}

// Span is the window's offsets.
func (s *WindowSource) Span() (time.Duration, time.Duration) { return s.Win.From, s.Win.To }

// From returns a reader of the events from the last mark at or before t
// up to a little past the window's end.
func (s *WindowSource) From(t time.Duration) (source.EventReader, error) {
	sc, err := s.F.ScanFrom(t)
	if err != nil {
		return nil, err
	}
	return windowReader{sc, s.Win.To}, nil
}

// Preamble says who the servers are, from the header: a seek lands far
// from their connected events.
func (s *WindowSource) Preamble(t time.Duration) []source.Event {
	var out []source.Event
	for _, si := range s.F.Header.Servers {
		if si.Identity != nil {
			out = append(out, source.Event{Node: si.Node, Kind: source.EventConnected, Offset: max(t, 0), At: s.F.Header.Epoch.Add(max(t, 0)), Identity: si.Identity})
		}
	}
	return out
}

// windowReader is a Scanner that ends a little past the window's end:
// events arrive in about offset order.
type windowReader struct {
	*Scanner
	to time.Duration
}

func (r windowReader) Next() (source.Event, bool) {
	ev, ok := r.Scanner.Next()
	if !ok || ev.Offset > r.to+time.Second {
		return source.Event{}, false
	}
	return ev, true
}

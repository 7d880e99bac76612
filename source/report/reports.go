package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/vkwatch/vkwatch/source"
)

// errNotReports is readReports' error for input that is not what --report
// writes (record.MarshalReports): a JSON array of save reports.
var errNotReports = errors.New("not --report output")

// readReports reads what --report writes: a JSON array of save reports,
// each as a recording's save_ended event holds it. Every report must name
// its server and its kind, and carry started_at (vkwatch writes it for
// every save): the page places each save in time by it.
func readReports(data []byte) ([]source.SaveReport, error) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '[' {
		return nil, fmt.Errorf("%w: not a JSON array", errNotReports)
	}
	var reps []source.SaveReport
	if err := json.Unmarshal(t, &reps, jsontext.AllowInvalidUTF8(true)); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("--report output cut short (JSON ends at byte %d)", len(t))
		}
		return nil, fmt.Errorf("%w: %v", errNotReports, err)
	}
	for i, r := range reps {
		switch {
		case r.Node == "" && r.Addr == "":
			return nil, fmt.Errorf("%w: report %d names no server (node, addr)", errNotReports, i+1)
		case r.Kind == "":
			return nil, fmt.Errorf("%w: report %d has no kind", errNotReports, i+1)
		case r.StartedAt.IsZero():
			return nil, fmt.Errorf("%w: report %d has no started_at", errNotReports, i+1)
		}
	}
	return reps, nil
}

// FromReports makes a recording of save reports alone (--report's): its
// servers in the order the reports first name them, each with its saves
// and no samples. The epoch is the run clock's, read back from the first
// report (started_at less started_ns), so the saves keep their times.
func FromReports(reps []source.SaveReport) *Recording {
	out := &Recording{SavesOnly: true}
	byNode := map[source.NodeID]*Server{}
	for i, r := range reps {
		if i == 0 {
			out.Epoch = r.StartedAt.Add(-r.Started)
		}
		id := r.Node
		if id == "" {
			id = source.NodeID(r.Addr)
		}
		s := byNode[id]
		if s == nil {
			s = &Server{Node: id, Addr: r.Addr}
			if s.Addr == "" {
				s.Addr = string(id)
			}
			byNode[id] = s
			out.Servers = append(out.Servers, s)
		}
		s.Saves = append(s.Saves, Save{SaveReport: r})
	}
	return out
}

// savesSpan is the time from the first save's start to the last one's
// end, seconds since the epoch: what a recording of saves alone spans.
func (s *Server) savesSpan() float64 {
	var end time.Duration
	for _, sv := range s.Saves {
		end = max(end, sv.Ended)
	}
	return end.Seconds()
}

package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// ErrNotBenchJSON is wrapped by ReadJSON's error when the input is not what
// WriteJSON writes.
var ErrNotBenchJSON = errors.New("not vkwatch bench --json output")

// MaxJSON bounds what ReadJSON reads: a bench of a fleet of 100 nodes and 7
// runs each writes well under 1 MiB; more is not a bench's output.
const MaxJSON = 64 << 20

// ReadJSON reads back what WriteJSON wrote (vkwatch bench --json), for
// vkwatch report. What WriteJSON leaves out (a run's cost curve, its PING
// summaries) stays zero; a Stat written as null reads back with N 0, and a
// run's null COW or memory delta as absent.
func ReadJSON(r io.Reader) ([]Summary, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxJSON+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxJSON {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrNotBenchJSON, MaxJSON>>20)
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("%w: empty input", ErrNotBenchJSON)
	}
	var doc struct {
		Servers *[]jsonSummary `json:"servers"`
	}
	if err := json.Unmarshal(t, &doc); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) && syn.Offset >= int64(len(t)) && t[0] == '{' {
			return nil, fmt.Errorf("bench output cut short (JSON ends at byte %d)", len(t))
		}
		return nil, fmt.Errorf("%w: %v", ErrNotBenchJSON, err)
	}
	if doc.Servers == nil {
		return nil, fmt.Errorf("%w: no \"servers\" list", ErrNotBenchJSON)
	}
	out := make([]Summary, 0, len(*doc.Servers))
	for _, js := range *doc.Servers {
		s := Summary{
			Server: js.Server, Addr: js.Addr, Label: js.Label, Kind: js.Kind,
			COW: fromJSONStat(js.COW), MemDelta: fromJSONStat(js.MemDelta), SaveTime: fromJSONStat(js.SaveTime),
			WriterOps: fromJSONStat(js.WriterOps), WorstPing: fromJSONStat(js.WorstPing), P99Ping: fromJSONStat(js.P99Ping),
			DatasetKeys: fromJSONStat(js.Keys), UsedMemory: fromJSONStat(js.Used),
			ServerTime: fromJSONStat(js.ServerTime), Blocked: fromJSONStat(js.Blocked),
		}
		for _, jr := range js.Runs {
			s.Runs = append(s.Runs, Run{
				Server: js.Server,
				Report: source.SaveReport{
					Addr: js.Addr, Kind: source.SaveKind(jr.Kind), Status: jr.Status, Evidence: jr.Evidence, StartedAt: jr.StartedAt,
					COW: optFromJSON(jr.COW), COWFrom: source.Instrument(jr.COWFrom), PeakUsedDelta: optFromJSON(jr.PeakUsedDelta),
					BlockedBefore: optFromJSON(jr.BlockedBefore), BlockedDuring: optFromJSON(jr.BlockedDuring),
					BlockedAfter:  optFromJSON(jr.BlockedAfter),
					Observed:      time.Duration(jr.SaveSeconds * float64(time.Second)),
					ServerSeconds: optFromJSON(jr.ReportServerS), PeakLiveCOW: optFromJSON(jr.ReportPeakLive),
				},
				WriterOps: jr.WriterOps, WorstPing: fromMs(jr.WorstPingMs), P99Ping: fromMs(jr.P99PingMs),
				ServerCOW: optFromJSON(jr.ServerCOW), ServerSeconds: optFromJSON(jr.ServerSeconds),
				DatasetKeys: jr.DatasetKeys, UsedMemory: jr.UsedMemory, WriterMisses: jr.WriterMisses,
				MemDelta: optFromJSON(jr.MemDelta),
			})
		}
		if js.ServerTime == nil && js.Blocked == nil {
			// Written before these figures were kept: they are the runs'.
			s.ServerTime, s.Blocked = runStats(s.Runs)
		}
		out = append(out, s)
	}
	return out, nil
}

func fromJSONStat(j *jsonStat) Stat {
	if j == nil {
		return Stat{}
	}
	return Stat{Mean: j.Mean, Min: j.Min, Max: j.Max, N: j.N}
}

func optFromJSON(p *int64) source.Opt[int64] {
	if p == nil {
		return source.Opt[int64]{}
	}
	return source.Some(*p)
}

func fromMs(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// Package report reads what vkwatch report draws from: recordings (what
// --record writes) and bench results (what bench --json writes). It turns a
// recording into per-server time series, each save with its span, method
// and cost curve, and decimates series to a figure's resolution keeping
// every peak. It draws nothing: ui/page draws the figures and the page.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/record"
)

// Input is one file given to vkwatch report: a recording (or the save
// reports of --report, as a recording of saves alone) or a bench's
// results, never both.
type Input struct {
	Path      string
	Recording *Recording
	Bench     []result.Summary
}

// Recording is a recording made ready for drawing.
type Recording struct {
	Epoch    time.Time
	VKWatch  string
	Settings map[string]string
	Servers  []*Server
	// SavesOnly says the recording is --report's save reports: each
	// server's saves, and no samples to draw over time.
	SavesOnly bool
}

// Server is one server of a recording: its samples as parallel series, one
// element per sample, in recorded order, and its saves. A value the sample
// did not have is NaN (absent is not zero).
type Server struct {
	Node     source.NodeID
	Addr     string
	Identity *source.Identity

	T []float64 // seconds since the recording's epoch

	Used      []float64 // used_memory, bytes
	RSS       []float64 // used_memory_rss, bytes (INFO)
	Footprint []float64 // Sample.Footprint, bytes
	// FootprintFrom is the instrument most of Footprint was read by.
	FootprintFrom source.Instrument

	Ops     []float64 // ops/s: the delta of total_commands_processed
	PingP99 []float64 // ms, the interval's PINGs; NaN when none completed
	PingMax []float64 // ms, the interval's worst PING (one unanswered counts with its age)

	Saves []Save
}

// Save is one save a recording saw end: the report the watcher wrote, and
// the save method the server was set to when it began.
type Save struct {
	source.SaveReport
	// Method is bgsave-default-method when the save began ("fork",
	// "forkless"); empty on a server without that setting (n/a).
	Method string
}

// notAnInput says what a file given to vkwatch report must be.
const notAnInput = "neither a vkwatch recording (--record), save reports (--report) nor bench --json output"

// MaxInput bounds a file Load reads into memory: about 18 hours of two
// servers sampled every 200 ms, uncompressed.
const MaxInput = 1 << 30

// Load reads one file: a recording (record.Read), the save reports of
// --report (a JSON array) or bench --json output (a JSON object).
// A file that is neither, an empty one and one cut short are errors; so is
// a recording cut short in its last line unless allowTruncated, since a
// report drawn from part of a run would say less than the run did without
// saying so.
func Load(path string, allowTruncated bool) (Input, error) {
	in := Input{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return in, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		return in, fmt.Errorf("%s: empty file: %s", path, notAnInput)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInput+1))
	if err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxInput {
		return in, fmt.Errorf("%s: larger than %d GiB, more than a report reads", path, MaxInput>>30)
	}
	rec, rerr := record.Read(bytes.NewReader(data))
	switch {
	case rerr == nil && rec.Truncated && !allowTruncated:
		return in, fmt.Errorf("%s: recording cut short after %d events (its last line is partial); --allow-truncated reports up to its last whole line", path, len(rec.Events))
	case rerr == nil:
		in.Recording = FromRecording(rec)
		return in, nil
	case !errors.Is(rerr, record.ErrNotRecording):
		return in, fmt.Errorf("%s: %w", path, rerr)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		reps, err := readReports(t)
		if err != nil {
			return in, fmt.Errorf("%s: %w", path, err)
		}
		in.Recording = FromReports(reps)
		return in, nil
	}
	sums, berr := result.ReadJSON(bytes.NewReader(data))
	if berr == nil {
		in.Bench = sums
		return in, nil
	}
	if errors.Is(berr, result.ErrNotBenchJSON) {
		// None of them: say what it was not, from the recording reader's
		// look at its first line.
		why := strings.TrimPrefix(rerr.Error(), record.ErrNotRecording.Error()+": ")
		return in, fmt.Errorf("%s: %s: %s", path, notAnInput, why)
	}
	return in, fmt.Errorf("%s: %w", path, berr)
}

// FromRecording builds the series and saves of every server of rec. The
// saves are the recording's own save_ended reports, what the watcher saw
// live; a recording without any (written before they were recorded) has
// them derived from its samples by record.Reports, as replay does.
func FromRecording(rec *record.Recording) *Recording {
	out := &Recording{Epoch: rec.Header.Epoch, VKWatch: rec.Header.VKWatch, Settings: rec.Header.Settings}
	byNode := map[source.NodeID]*Server{}
	server := func(n source.NodeID) *Server {
		s := byNode[n]
		if s == nil {
			s = &Server{Node: n, Addr: string(n)}
			byNode[n] = s
			out.Servers = append(out.Servers, s)
		}
		return s
	}
	for _, si := range rec.Header.Servers {
		if si.Node == "" {
			// bench wrote its servers without their node id until
			// now: their events carry the address as the id.
			si.Node = source.NodeID(si.Addr)
		}
		s := server(si.Node)
		s.Addr, s.Identity = si.Addr, si.Identity
	}
	methods := map[*Server][]string{}
	from := map[*Server]map[source.Instrument]int{}
	var reports []source.SaveReport
	for i := range rec.Events {
		ev := &rec.Events[i]
		switch {
		case ev.Kind == source.EventSample && ev.Sample != nil:
			s := server(ev.Node)
			s.addSample(ev.Sample)
			methods[s] = append(methods[s], ev.Sample.Config.Method)
			if ev.Sample.Footprint.OK {
				if from[s] == nil {
					from[s] = map[source.Instrument]int{}
				}
				from[s][ev.Sample.FootprintFrom]++
			}
		case ev.Kind == source.EventConnected && ev.Identity != nil:
			s := server(ev.Node)
			if s.Identity == nil {
				s.Identity = ev.Identity
			}
		case ev.Kind == source.EventSaveEnded && ev.Report != nil:
			reports = append(reports, *ev.Report)
		}
	}
	for _, r := range reports {
		s := server(r.Node)
		s.Saves = append(s.Saves, Save{SaveReport: r, Method: s.methodAt(methods[s], r.Started)})
	}
	for _, s := range out.Servers {
		best := 0
		for in, n := range from[s] {
			if n > best || n == best && in < s.FootprintFrom {
				s.FootprintFrom, best = in, n
			}
		}
	}
	return out
}

func (s *Server) addSample(sm *source.Sample) {
	s.T = append(s.T, sm.Offset.Seconds())
	s.Used = append(s.Used, optF(sm.Info.UsedMemory))
	s.RSS = append(s.RSS, optF(sm.Info.RSS))
	s.Footprint = append(s.Footprint, optF(sm.Footprint))
	if v, ok := sm.OpsPerSec.Get(); ok {
		s.Ops = append(s.Ops, v)
	} else {
		s.Ops = append(s.Ops, math.NaN())
	}
	if sm.Ping.Count > 0 {
		s.PingP99 = append(s.PingP99, ms(sm.Ping.P99))
	} else {
		s.PingP99 = append(s.PingP99, math.NaN())
	}
	if w := sm.Ping.Worst(); w > 0 {
		s.PingMax = append(s.PingMax, ms(w))
	} else {
		s.PingMax = append(s.PingMax, math.NaN())
	}
}

// methodAt is the save method of the first sample at or after offset off
// (the sample that first saw the save running); samples are in order.
func (s *Server) methodAt(methods []string, off time.Duration) string {
	t := off.Seconds()
	i := sort.SearchFloat64s(s.T, t)
	if i < len(methods) {
		return methods[i]
	}
	if len(methods) > 0 {
		return methods[len(methods)-1]
	}
	return ""
}

// Duration is the time of the server's last sample, seconds since the
// epoch; of its last save's end where it has no sample (--report's).
func (s *Server) Duration() float64 {
	if len(s.T) == 0 {
		return s.savesSpan()
	}
	return s.T[len(s.T)-1]
}

func optF(o source.Opt[int64]) float64 {
	if v, ok := o.Get(); ok {
		return float64(v)
	}
	return math.NaN()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package page

import (
	"bytes"
	"html"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/record"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/units"
)

// hourRecording writes a recording of two servers sampled every 200 ms for
// an hour, as --record writes it: 18,000 samples a server, a one-minute
// fork save every five minutes with its cost curve, noise on every line
// and a PING stall now and then.
func hourRecording(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "hour.jsonl")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	epoch := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	nodes := []source.NodeID{"127.0.0.1:7001", "127.0.0.1:7002"}
	h := record.Header{VKWatch: "bench", Epoch: epoch, Settings: map[string]string{"interval": "200ms"}}
	for _, n := range nodes {
		h.Servers = append(h.Servers, record.ServerInfo{Node: n, Addr: string(n),
			Identity: &source.Identity{Addr: string(n), ServerName: "valkey", Version: "9.0.0", Role: "master", Local: true}})
	}
	w, err := record.NewWriter(f, h, record.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	const step = 200 * time.Millisecond
	const n = int(time.Hour / step)
	const base = 4 << 30
	for si, node := range nodes {
		var curve []source.CurvePoint
		var started time.Duration
		for i := range n {
			off := time.Duration(i) * step
			inSave := (off%(5*time.Minute)) >= time.Minute && (off%(5*time.Minute)) < 2*time.Minute
			s := &source.Sample{Seq: uint64(i), Offset: off, At: epoch.Add(off)}
			s.Info.UsedMemory = source.Some[int64](base + int64(r.IntN(1<<20)))
			s.Info.RSS = source.Some[int64](base + 200<<20 + int64(r.IntN(1<<20)))
			s.Config.Method = []string{"fork", "forkless"}[si]
			s.OpsPerSec = source.Some(50000 + r.Float64()*5000)
			p99 := time.Duration(200+r.IntN(100)) * time.Microsecond
			maxp := p99 * 2
			if r.IntN(300) == 0 {
				maxp = time.Duration(r.IntN(200)) * time.Millisecond
			}
			s.Ping = source.Latency{Count: 100, Min: 50 * time.Microsecond, P50: 100 * time.Microsecond, P99: p99, Max: maxp}
			cow := int64(0)
			if inSave {
				if curve == nil {
					started = off
				}
				frac := float64(off-started) / float64(time.Minute)
				cow = int64(float64(1<<30) * math.Sqrt(frac))
				s.Info.RDBInProgress = source.Some[int64](1)
				s.Save = &source.SaveProgress{Kind: source.SaveFork, Started: started, Elapsed: off - started,
					Processed: source.Some(int64(frac * 1e6)), Total: source.Some[int64](1e6)}
				curve = append(curve, source.CurvePoint{Progress: frac, Elapsed: off - started, COW: source.Some(cow), Footprint: source.Some(s.Info.RSS.V + cow)})
			}
			s.COW, s.COWFrom = source.Some(cow), source.FromProc
			s.Footprint, s.FootprintFrom = source.Some(s.Info.RSS.V+cow), source.FromProc
			if err := w.Write(source.Event{Node: node, Kind: source.EventSample, Offset: off, At: s.At, Sample: s}); err != nil {
				tb.Fatal(err)
			}
			if !inSave && curve != nil {
				rep := &source.SaveReport{Node: node, Addr: string(node), Kind: source.SaveFork, Status: "ok",
					Trigger: source.Trigger{Kind: source.TriggerSchedule, Detail: "save 300 1"},
					Started: started, Ended: off, Observed: off - started, COW: source.Some(curve[len(curve)-1].COW.V),
					PeakCOW: curve[len(curve)-1].COW, PeakAtProgress: source.Some(curve[len(curve)-1].Progress), Curve: curve}
				if err := w.Write(source.Event{Node: node, Kind: source.EventSaveEnded, Offset: off, At: s.At, Report: rep}); err != nil {
					tb.Fatal(err)
				}
				curve = nil
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkReportHour is vkwatch report of a one-hour, two-server
// recording: read, build and write the page. Its reference,
// BenchmarkReadHour, only reads the same file (record.Read): the floor
// any report of it pays.
func BenchmarkReportHour(b *testing.B) {
	p := hourRecording(b)
	var size int
	for b.Loop() {
		in, err := src.Load(p, false)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Build([]src.Input{in})
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := r.WriteHTML(&buf, time.Now(), "bench"); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "html-bytes")
}

// BenchmarkReadHour is the reference: record.Read of the same recording.
func BenchmarkReadHour(b *testing.B) {
	p := hourRecording(b)
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := record.Read(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// TestPagePeaksLabelled: the cost curves' figures label each server's
// highest copy-on-write and footprint over its saves, as the recording's
// save reports hold them (the golden's recording has no sampled save).
func TestPagePeaksLabelled(t *testing.T) {
	p := hourRecording(t)
	rec, err := record.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	peak := map[source.NodeID][2]int64{}
	for _, ev := range rec.Events {
		if ev.Kind != source.EventSaveEnded || ev.Report == nil {
			continue
		}
		pk := peak[ev.Node]
		for _, pt := range ev.Report.Curve {
			pk[0], pk[1] = max(pk[0], pt.COW.V), max(pk[1], pt.Footprint.V)
		}
		peak[ev.Node] = pk
	}
	if len(peak) != 2 {
		t.Fatalf("the recording has saves of %d servers, want 2", len(peak))
	}
	page := structure(render(t, load(t, p)))
	for node, pk := range peak {
		for i, what := range []string{"copy-on-write", "footprint"} {
			if want := "peak " + units.BytesFixed(float64(pk[i])); strings.Count(page, want) < 1 {
				t.Errorf("%s: the page has no label %q for its highest %s", node, want, what)
			}
		}
	}
}

// TestPageVerdict: the page of a bench of one server saved both ways has
// the verdict under the seeds' table, line for line as result.Decide
// makes it from the file: here memory binds, and forkless is the choice.
func TestPageVerdict(t *testing.T) {
	lim := result.Limit{Kind: risk.LimitCgroup, Cap: risk.Figure{Bytes: 600 << 20, From: "the memory limit of cgroup v2:/x"},
		Base: risk.Figure{Bytes: 300 << 20, From: "the memory usage of cgroup v2:/x"}}
	col := func(method string, kind source.SaveKind, cow int64, ops float64) result.Summary {
		s := result.Summary{Addr: "10.0.0.7:6379", Method: method}
		for n := range 3 {
			s.Runs = append(s.Runs, result.Run{N: 2*n + len(method) - 3, Asked: method, WriterOps: ops + float64(n),
				Report:    source.SaveReport{Kind: kind, Status: "ok", COW: source.Some(cow), Observed: 3 * time.Second},
				ServerCOW: source.Some(cow), MemDelta: source.Some(cow + 1<<20), Limits: []result.Limit{lim}})
		}
		s.Summarise()
		return s
	}
	sums := []result.Summary{col("fork", source.SaveFork, 250<<20, 27000), col("forkless", source.SaveForkless, 0, 23000)}
	p := filepath.Join(t.TempDir(), "methods.json")
	var b bytes.Buffer
	if err := result.WriteJSON(&b, sums); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// html/template writes + as &#43;, a browser shows it as +.
	page := strings.ReplaceAll(string(render(t, load(t, p))), "&#43;", "+")
	v := result.Decide(sums)
	if v.Choice != "forkless" {
		t.Fatalf("fixture: verdict %q (%s), want forkless", v.Choice, v.Why)
	}
	at := strings.Index(page, `<dl class="verdict" data-choice="forkless">`)
	if at < 0 || at < strings.Index(page, `<table class="seeds">`) {
		t.Fatalf("no forkless verdict under the seeds' table")
	}
	rest := page[at:]
	for _, line := range append(append(v.Memory, v.Trade...), "forkless: "+v.Why, v.Flips) {
		i := strings.Index(rest, html.EscapeString(line))
		if i < 0 {
			t.Fatalf("the page's verdict lacks, in order, %q:\n%s", line, page[at:at+2000])
		}
		rest = rest[i:]
	}
}

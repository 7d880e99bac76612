package record

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// TestRecordLiveWatch records a real server watched through a BGSAVE and
// checks the recording against what the watcher emitted live.
func TestRecordLiveWatch(t *testing.T) {
	const pw = "s3cret-Pa55word"
	// A per-key delay stretches the save of 20,000 keys to about a second,
	// so that several samples see it running.
	s := servertest.Start(t, server.Options{Password: pw, Args: []string{"--rdb-key-save-delay", "50"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := servertest.Client(t, s)
	servertest.Populate(t, adm, 20000, "key", 300)

	// With /proc, so that the instruments and the cgroup are recorded and
	// replayed too.
	pr, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	w, clock, id := watchtest.Connect(t, ctx, "redis://:"+pw+"@"+s.Addr, watch.Config{Interval: 100 * time.Millisecond, PingInterval: 5 * time.Millisecond, Proc: pr.Read})
	addr := w.Endpoint().String()

	var jsonl, csvBuf syncBuffer
	h := Header{
		VKWatch:  "test",
		Epoch:    clock.Epoch(),
		Settings: map[string]string{"interval": "100ms", "ping_interval": "5ms"},
		Servers:  []ServerInfo{{Node: w.Node(), Addr: addr, Identity: &id}},
	}
	rw, err := NewWriter(&jsonl, "jsonl", h)
	if err != nil {
		t.Fatal(err)
	}
	cw, err := NewWriter(&csvBuf, "csv", h)
	if err != nil {
		t.Fatal(err)
	}

	// Each event is kept with the run clock's offset and the wall clock
	// when it was written.
	type written struct {
		ev  source.Event
		off time.Duration
		now time.Time
	}
	var live []written
	report := watchtest.RunBGSAVE(t, ctx, w, 30*time.Second, func(ev source.Event) {
		off, now := clock.Offset(), time.Now()
		if err := rw.Write(ev); err != nil {
			t.Errorf("write: %v", err)
		}
		if err := cw.Write(ev); err != nil {
			t.Errorf("write csv: %v", err)
		}
		live = append(live, written{ev, off, now})
	})
	liveReports := []source.SaveReport{report}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	data := jsonl.bytes()

	rec := readComplete(t, data)
	if len(rec.Events) != len(live) {
		t.Fatalf("read %d events, watcher emitted %d", len(rec.Events), len(live))
	}
	if !rec.Header.Epoch.Equal(clock.Epoch()) || rec.Header.Servers[0].Addr != addr || rec.Header.Servers[0].Identity == nil {
		t.Fatalf("header %+v", rec.Header)
	}

	// Every event as emitted, with its time as the run clock gave it.
	// Samples are strictly ordered in time; other events interleave (a
	// command's answer can be queued just before the sample whose INFO
	// was answered earlier).
	lastSample := map[source.NodeID]time.Duration{}
	for i, ev := range rec.Events {
		if want, got := norm(live[i].ev), norm(ev); !reflect.DeepEqual(want, got) {
			t.Fatalf("event %d (%s) differs:\nlive %+v\nread %+v", i, ev.Kind, want, got)
		}
		if !ev.At.Equal(rec.Header.Epoch.Add(ev.Offset)) {
			t.Fatalf("event %d: at %v != epoch + %v", i, ev.At, ev.Offset)
		}
		// Stamped when it happened, not when it was written: on the run
		// clock, which is monotonic. (At is the epoch plus the offset, so
		// it leaves the wall clock by as much as the wall clock is set
		// while the test runs: a VM's clock can be stepped by seconds.)
		if lag := live[i].off - ev.Offset; lag < 0 || lag > time.Second {
			step := live[i].now.Sub(rec.Header.Epoch) - live[i].off
			t.Fatalf("event %d (%s) at offset %v was written at offset %v (the wall clock had moved %v against the run clock)", i, ev.Kind, ev.Offset, live[i].off, step)
		}
		if ev.Kind == source.EventSample {
			if ev.Offset <= lastSample[ev.Node] {
				t.Fatalf("sample %d: offset %v not after %v", i, ev.Offset, lastSample[ev.Node])
			}
			lastSample[ev.Node] = ev.Offset
		}
	}

	// Replaying the samples reproduces the live save reports, to the
	// precision a recording keeps of ops/s and PING (precision.go).
	replayed := Reports(rec)
	if d := reportsDiffer(liveReports, replayed); d != "" {
		t.Fatalf("replayed reports differ: %s:\nlive   %+v\nreplay %+v", d, liveReports, replayed)
	}
	t.Logf("%d events; replayed report: %s %s observed %s, COW %v", len(rec.Events), replayed[0].Kind, replayed[0].Status, replayed[0].Observed, replayed[0].COW)
	if r := replayed[0]; !r.COW.OK || r.Kind != source.SaveFork || r.Trigger != (source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}) ||
		!r.PeakCOW.OK || !r.PeakFootprintDelta.OK || len(r.Curve) == 0 {
		t.Errorf("report %+v", r)
	}
	var fromProc, withCgroup bool
	for _, ev := range rec.Events {
		if s := ev.Sample; ev.Kind == source.EventSample && s != nil {
			fromProc = fromProc || s.COWFrom == source.FromProc && s.FootprintFrom == source.FromProc
			withCgroup = withCgroup || s.Proc.Cgroup != "" && s.Proc.CgroupUsage.OK
		}
	}
	if !fromProc || !withCgroup {
		t.Errorf("recorded samples: instruments from /proc %v, cgroup %v", fromProc, withCgroup)
	}

	// A copy cut in the middle of a line reads up to the line before.
	lines := bytes.SplitAfter(data, []byte("\n"))
	cutAt := len(lines) / 2
	cut := append(bytes.Join(lines[:cutAt], nil), lines[cutAt][:len(lines[cutAt])/2]...)
	part, err := Read(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	if !part.Truncated || len(part.Events) != cutAt-1 {
		t.Fatalf("cut copy: truncated %v, %d events, want %d", part.Truncated, len(part.Events), cutAt-1)
	}

	if _, err := Read(strings.NewReader("PONG\r\n")); err == nil || !strings.HasPrefix(err.Error(), "not a vkwatch recording") {
		t.Fatalf("garbage: %v", err)
	}

	for name, b := range map[string][]byte{"jsonl": data, "csv": csvBuf.bytes()} {
		if bytes.Contains(b, []byte(pw)) {
			t.Errorf("%s recording contains the password", name)
		}
		if !bytes.Contains(b, []byte(s.Addr)) {
			t.Errorf("%s recording lacks the address", name)
		}
	}
}

// reportsDiffer says how replayed reports differ from live ones beyond the
// precision a recording keeps: their means of ops/s within opsStep, their
// merged PING figures within latencyStep (each input is off by at most half
// a step, and a mean or a quantile of the mixture moves no further; min and
// max within their two figures), offsets within two offsetSteps, and every
// other field exactly.
func reportsDiffer(live, replayed []source.SaveReport) string {
	if len(live) != len(replayed) {
		return fmt.Sprintf("%d reports, %d replayed", len(live), len(replayed))
	}
	for i := range live {
		a, b := norm(live[i]), norm(replayed[i])
		for _, p := range [][2]*source.Opt[float64]{{&a.OpsBefore, &b.OpsBefore}, {&a.OpsDuring, &b.OpsDuring},
			{&a.WriterOpsBefore, &b.WriterOpsBefore}, {&a.WriterOpsDuring, &b.WriterOpsDuring}} {
			if p[0].OK != p[1].OK || math.Abs(p[0].V-p[1].V) > opsStep {
				return fmt.Sprintf("report %d: ops/s %v vs %v", i, *p[0], *p[1])
			}
			*p[0], *p[1] = source.Opt[float64]{}, source.Opt[float64]{}
		}
		for _, p := range [][2]*source.Latency{{&a.PingBefore, &b.PingBefore}, {&a.PingDuring, &b.PingDuring}} {
			x, y := p[0], p[1]
			for _, d := range [][2]*time.Duration{{&x.Min, &y.Min}, {&x.P50, &y.P50}, {&x.P99, &y.P99}, {&x.Max, &y.Max}, {&x.InFlight, &y.InFlight}} {
				// Min, max and in flight to two figures (min down, max
				// up): within 10%.
				tol := max(latencyStep, max(*d[0], *d[1])/10)
				if diff := *d[0] - *d[1]; diff > tol || diff < -tol {
					return fmt.Sprintf("report %d: PING %v vs %v", i, *x, *y)
				}
				*d[0], *d[1] = 0, 0
			}
		}
		// Offsets to offsetStep: the replayed save's start, end and curve
		// within two steps (each end rounded once).
		for _, d := range [][2]*time.Duration{{&a.Started, &b.Started}, {&a.Ended, &b.Ended}, {&a.Observed, &b.Observed}} {
			if diff := *d[0] - *d[1]; diff > 2*offsetStep || diff < -2*offsetStep {
				return fmt.Sprintf("report %d: offsets %v vs %v", i, *d[0], *d[1])
			}
			*d[0], *d[1] = 0, 0
		}
		if diff := a.StartedAt.Sub(b.StartedAt); diff > 2*offsetStep || diff < -2*offsetStep {
			return fmt.Sprintf("report %d: started at %v vs %v", i, a.StartedAt, b.StartedAt)
		}
		b.StartedAt = a.StartedAt
		if len(a.Curve) == len(b.Curve) {
			for j := range a.Curve {
				if diff := a.Curve[j].Elapsed - b.Curve[j].Elapsed; diff > 2*offsetStep || diff < -2*offsetStep {
					return fmt.Sprintf("report %d: curve point %d elapsed %v vs %v", i, j, a.Curve[j].Elapsed, b.Curve[j].Elapsed)
				}
				b.Curve[j].Elapsed = a.Curve[j].Elapsed
			}
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("report %d: %s", i, firstDiff(reflect.ValueOf(a), reflect.ValueOf(b), "report"))
		}
	}
	return ""
}

package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
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
	rw, err := NewWriter(&jsonl, h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cw, err := NewWriter(&csvBuf, h, Options{Format: CSV})
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
	if !rec.Header.Epoch.Equal(clock.Epoch()) || rec.Header.Servers[0].Addr != addr || rec.Header.Servers[0].Identity == nil {
		t.Fatalf("header %+v", rec.Header)
	}
	// Every event as emitted (a save_started derived again), with the
	// figures derived again by the reader's tracker exactly as the
	// watcher's derived them, and its time as the run clock gave it.
	evs := make([]source.Event, len(live))
	for i := range live {
		evs[i] = live[i].ev
	}
	if d := eventsDiffer(evs, rec.Events); d != "" {
		t.Fatal(d)
	}
	lastSample := map[source.NodeID]time.Duration{}
	for i, ev := range rec.Events {
		// Stamped when it happened, not when it was written: on the run
		// clock, which is monotonic.
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
	var replayed []source.SaveReport
	for _, ev := range rec.Events {
		if ev.Kind == source.EventSaveEnded {
			replayed = append(replayed, *ev.Report)
		}
	}
	if len(replayed) != 1 || !reflect.DeepEqual(norm(replayed[0]), norm(report)) {
		t.Fatalf("replayed reports differ:\nlive   %+v\nreplay %+v", report, replayed)
	}
	if d := reportsDiffer(liveReports, rec.Derived); d != "" {
		t.Fatalf("reports derived from the recording differ from the live ones: %s", d)
	}
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

	for name, b := range map[string][]byte{"jsonl": data, "csv": csvBuf.bytes()} {
		if bytes.Contains(b, []byte(pw)) {
			t.Errorf("%s recording contains the password", name)
		}
		if !bytes.Contains(b, []byte(s.Addr)) {
			t.Errorf("%s recording lacks the address", name)
		}
	}
}

// reportsDiffer says how two lists of reports differ, "" when they do
// not (times compared as instants).
func reportsDiffer(a, b []source.SaveReport) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d reports, %d", len(a), len(b))
	}
	for i := range a {
		if x, y := norm(a[i]), norm(b[i]); !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("report %d:\n%+v\n%+v", i, x, y)
		}
	}
	return ""
}

// norm is r with its start time in UTC without a monotonic reading: as a
// recording holds it.
func norm(r source.SaveReport) source.SaveReport {
	r.StartedAt = r.StartedAt.Round(0).UTC()
	return r
}

// eventsDiffer says how two lists of events differ, "" when they do not:
// what a recording holds (their JSON), their times (as instants), and what
// a reader derives (a sample's instruments and save progress, its curve
// too).
func eventsDiffer(want, got []source.Event) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		a, b := want[i], got[i]
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		switch {
		case !bytes.Equal(ja, jb):
			return fmt.Sprintf("event %d differs:\nwant %s\ngot  %s", i, ja, jb)
		case !a.At.Equal(b.At) || a.Kind != b.Kind:
			return fmt.Sprintf("event %d: %s at %v, want %s at %v", i, b.Kind, b.At, a.Kind, a.At)
		case a.Sample == nil:
			continue
		case a.Sample.Offset != b.Sample.Offset || !a.Sample.At.Equal(b.Sample.At):
			return fmt.Sprintf("event %d: sample at %v, want %v", i, b.Sample.Offset, a.Sample.Offset)
		case !reflect.DeepEqual(derived(a.Sample), derived(b.Sample)):
			return fmt.Sprintf("event %d: derived\nwant %+v %+v\ngot  %+v %+v", i, derived(a.Sample), a.Sample.Save, derived(b.Sample), b.Sample.Save)
		}
	}
	return ""
}

// derived is what a reader derives of a sample.
func derived(s *source.Sample) any {
	return []any{s.COW, s.COWFrom, s.Footprint, s.FootprintFrom, s.Save}
}

package record

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// TestDeltaRoundTrip: samples that change a little, a lot, or lose and
// gain fields (absent, a save starting and ending) read back exactly as
// written, through delta lines, and a full sample comes every fullEvery.
func TestDeltaRoundTrip(t *testing.T) {
	epoch := time.Now().Round(0)
	r := rand.New(rand.NewSource(7))
	f := &filler{r: r, epoch: epoch}
	var base source.Sample
	f.fill(reflect.ValueOf(&base).Elem())
	var evs []source.Event
	seq := map[source.NodeID]uint64{}
	for i := range 400 {
		node := []source.NodeID{"n1", "n2"}[i%2]
		off := time.Duration(i) * 100 * time.Millisecond
		s := base
		switch i % 7 {
		case 0:
			f.fill(reflect.ValueOf(&s).Elem()) // everything changes
		case 1:
			s.Info.UsedMemory = source.Opt[int64]{} // absent
		case 2:
			s.Save = nil
		case 3:
			s.Info.UsedMemory = source.Some(s.Info.UsedMemory.V + int64(i))
			s.Ping.P99 = time.Duration(i) * time.Microsecond
		}
		if i == 200 {
			seq[node] += 5 // a new watcher run: not the next seq
		}
		seq[node]++
		s.Seq, s.Offset, s.At = seq[node], off, epoch.Add(off)
		if s.Save != nil {
			c := *s.Save
			c.Elapsed = off
			s.Save = &c
		}
		evs = append(evs, source.Event{Node: node, Kind: source.EventSample, Offset: off, At: s.At, Sample: &s})
		base = s
	}
	data := writeAll(t, "jsonl", testHeader(epoch), evs)
	rec, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != len(evs) || rec.Orphans != 0 {
		t.Fatalf("read %d of %d events, %d orphans", len(rec.Events), len(evs), rec.Orphans)
	}
	for i := range evs {
		if want, got := norm(evs[i]), norm(rec.Events[i]); !reflect.DeepEqual(want, got) {
			t.Fatalf("event %d differs after the round trip: %s", i, firstDiff(reflect.ValueOf(want), reflect.ValueOf(got), "event"))
		}
	}
	lines := bytes.Split(data, []byte("\n"))
	deltas, fulls := 0, 0
	for _, l := range lines {
		switch {
		case bytes.Contains(l, []byte(`"delta":`)):
			deltas++
		case bytes.Contains(l, []byte(`"sample":`)):
			fulls++
		}
	}
	// 40 s of two nodes: a full sample every 5 s each, and one at the new run.
	if fulls < 16 || fulls > 18 || deltas != len(evs)-fulls {
		t.Errorf("%d full samples and %d deltas of %d", fulls, deltas, len(evs))
	}
}

// firstDiff names the first field where a and b differ.
func firstDiff(a, b reflect.Value, path string) string {
	if a.Kind() == reflect.Pointer {
		if a.IsNil() != b.IsNil() {
			return path + " (nil?)"
		}
		if a.IsNil() {
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	}
	if a.Kind() == reflect.Struct && a.Type() != timeType {
		for i := 0; i < a.NumField(); i++ {
			if a.Type().Field(i).IsExported() {
				if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
					return d
				}
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return path + ": " + fmtAny(a) + " vs " + fmtAny(b)
	}
	return ""
}

func fmtAny(v reflect.Value) string {
	return strings.ReplaceAll(fmt.Sprintf("%v", v.Interface()), "\n", " ")
}

// TestVersion2RecordingReadsAndRewritesAsDeltas: a real version 2
// recording (two servers, 200ms, writers running; every sample whole)
// reads, and written again as version 3 (deltas) reads back to the very
// same events in fewer bytes.
func TestVersion2RecordingReadsAndRewritesAsDeltas(t *testing.T) {
	data, err := os.ReadFile("testdata/v2-two-servers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := Read(bytes.NewReader(data))
	if err != nil || v2.Truncated || v2.Header.Version != 2 {
		t.Fatalf("read: %v, truncated %v, version %d", err, v2 != nil && v2.Truncated, v2.Header.Version)
	}
	samples := 0
	for _, ev := range v2.Events {
		if ev.Kind == source.EventSample {
			samples++
		}
	}
	if samples < 30 {
		t.Fatalf("%d samples read", samples)
	}
	v3data := writeAll(t, "jsonl", v2.Header, v2.Events)
	v3, err := Read(bytes.NewReader(v3data))
	if err != nil || v3.Header.Version != Version {
		t.Fatalf("rewritten: %v, version %d", err, v3.Header.Version)
	}
	if len(v3.Events) != len(v2.Events) {
		t.Fatalf("rewritten: %d events of %d", len(v3.Events), len(v2.Events))
	}
	for i := range v2.Events {
		if d := firstDiff(reflect.ValueOf(norm(v2.Events[i])), reflect.ValueOf(norm(v3.Events[i])), "event"); d != "" {
			t.Fatalf("event %d differs when rewritten as deltas: %s", i, d)
		}
	}
	t.Logf("%d samples: version 2 %d bytes, version 3 %d bytes", samples, len(data), len(v3data))
	if len(v3data)*2 > len(data) {
		t.Errorf("deltas take %d bytes for the %d of whole samples", len(v3data), len(data))
	}
}

// TestVersion4RecordingRewritesAsVersion5: the real version 4 recordings
// in testdata (deltas in which an absent cow or footprint means
// "unchanged") read, and written again as version 5 (where it means
// "derived": Derive' figure) read back to the same events, the
// busy one's save with its copy-on-write included.
func TestVersion4RecordingRewritesAsVersion5(t *testing.T) {
	for _, name := range []string{"idle", "busy"} {
		data, err := os.ReadFile("testdata/" + name + "-two-servers.jsonl.zst")
		if err != nil {
			t.Fatal(err)
		}
		v4, err := Read(bytes.NewReader(data))
		if err != nil || v4.Truncated || v4.Header.Version != 4 {
			t.Fatalf("%s: %v, truncated %v, version %d", name, err, v4 != nil && v4.Truncated, v4.Header.Version)
		}
		withCOW := 0
		for _, ev := range v4.Events {
			if ev.Kind == source.EventSample && ev.Sample.COW.V > 0 {
				withCOW++
			}
		}
		if name == "busy" && withCOW < 100 {
			t.Fatalf("busy: %d samples with copy-on-write", withCOW)
		}
		v5data := writeAll(t, "jsonl", v4.Header, v4.Events)
		v5, err := Read(bytes.NewReader(v5data))
		if err != nil || v5.Header.Version != Version || len(v5.Events) != len(v4.Events) {
			t.Fatalf("%s rewritten: %v, version %d, %d events of %d", name, err, v5.Header.Version, len(v5.Events), len(v4.Events))
		}
		for i := range v4.Events {
			if d := firstDiff(reflect.ValueOf(norm(v4.Events[i])), reflect.ValueOf(norm(v5.Events[i])), "event"); d != "" {
				t.Fatalf("%s: event %d differs when rewritten as version 5: %s", name, i, d)
			}
		}
		if bytes.Contains(v5data, []byte(`"delta":{"footprint"`)) || bytes.Count(v5data, []byte(`"footprint":`)) > bytes.Count(v5data, []byte(`"sample":`)) {
			t.Errorf("%s: version 5 deltas still carry derivable footprints", name)
		}
	}
}

// TestVersion6DerivedFields: a delta leaves out ping10s.in_flight_us when
// it is ping.in_flight_us and save.elapsed_s when it is the sample's
// offset less save.started_s, writes each when it is not (unchanged or
// not), and every sample reads back as written.
func TestVersion6DerivedFields(t *testing.T) {
	epoch := time.Now().Round(0)
	var evs []source.Event
	for i := range 40 {
		off := time.Duration(i)*200*time.Millisecond + time.Duration(i%3)*time.Microsecond
		s := &source.Sample{Seq: uint64(i), Offset: off, At: epoch.Add(off)}
		s.Info.UsedMemory = source.Some(int64(1000 + i))
		s.Ping.InFlight = time.Duration(i%4) * 10 * time.Microsecond
		s.Ping10s.InFlight = s.Ping.InFlight
		if i%10 == 7 {
			s.Ping10s.InFlight = 3 * time.Microsecond // not the interval's
		}
		if i >= 5 {
			s.Save = &source.SaveProgress{Kind: source.SaveFork, Started: time.Second, Elapsed: off - time.Second}
			if i%10 == 3 {
				s.Save.Elapsed = 42 * time.Millisecond // not offset less start
			}
		}
		evs = append(evs, source.Event{Node: "n1", Kind: source.EventSample, Offset: off, At: s.At, Sample: s})
	}
	data := writeAll(t, "jsonl", testHeader(epoch), evs)
	rec, err := Read(bytes.NewReader(data))
	if err != nil || len(rec.Events) != len(evs) {
		t.Fatalf("read back: %v, %d events of %d", err, len(rec.Events), len(evs))
	}
	for i := range evs {
		if d := firstDiff(reflect.ValueOf(norm(evs[i])), reflect.ValueOf(norm(rec.Events[i])), "event"); d != "" {
			t.Fatalf("event %d differs after the round trip: %s", i, d)
		}
	}
	for i, l := range bytes.Split(data, []byte("\n"))[1:] {
		if !bytes.Contains(l, []byte(`"delta":`)) {
			continue
		}
		inFlight := bytes.Contains(l, []byte(`"ping10s":{"in_flight_us"`))
		if want := i%10 == 7; inFlight != want {
			t.Errorf("delta %d: ping10s.in_flight_us written %v, want %v: %s", i, inFlight, want, l)
		}
		// Written when not derivable, and in the save that begins in a
		// delta (written whole).
		elapsed := bytes.Contains(l, []byte(`"elapsed_s"`))
		if want := i == 5 || i > 5 && i%10 == 3; elapsed != want {
			t.Errorf("delta %d: save.elapsed_s written %v, want %v: %s", i, elapsed, want, l)
		}
	}
}

package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// fill sets every exported field that a recording holds (a json tag other
// than "-") of the value v points to, at any depth, to a value no other
// field has: a field added to source's types is filled too, with no change
// here. (Reflection in a test only: the package itself uses none.)
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 8, 0, *n, *n, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fallthrough
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", *n%7) + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n) * 1001)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n) * 7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	default:
		panic("fill: a field of kind " + v.Kind().String() + ": teach the test (and check FORMAT.md) how it is recorded")
	}
}

// TestEveryFieldRoundTrips: every field a recording holds of a sample and
// of every other event's payload, filled, reads back as it was written:
// a new field of Sample (or Info, SaveReport, ...) is recorded and replayed
// with no change outside its struct. What is derived (json:"-") is not
// written at all, and is derived again on reading.
func TestEveryFieldRoundTrips(t *testing.T) {
	epoch := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	n := 0
	var evs []source.Event
	for i, k := range source.EventKinds() {
		if k == source.EventSaveStarted {
			continue // derived, not written
		}
		ev := source.Event{Node: "n1", Kind: k, Offset: time.Duration(i+1) * time.Second}
		switch k {
		case source.EventSample:
			fill(reflect.ValueOf(&ev.Sample).Elem(), &n)
			ev.Sample.Seq = 0
		case source.EventConnected:
			fill(reflect.ValueOf(&ev.Identity).Elem(), &n)
		case source.EventDisconnected:
			ev.Err, ev.Stalled = "not answering for 1.2s", true
		case source.EventCommand:
			fill(reflect.ValueOf(&ev.Command).Elem(), &n)
			ev.Command.Command = "BGSAVE" // a command with no secret to mask
		case source.EventSaveEnded:
			fill(reflect.ValueOf(&ev.Report).Elem(), &n)
			ev.Report.Addr = "10.0.0.7:6379"
		case source.EventTopology:
			ev.Node = ""
			fill(reflect.ValueOf(&ev.Topology).Elem(), &n)
		case source.EventSpike:
			fill(reflect.ValueOf(&ev.Spike).Elem(), &n)
		default:
			t.Fatalf("event kind %s: say which payload it has", k)
		}
		ev.At = epoch.Add(ev.Offset)
		evs = append(evs, ev)
	}
	data := writeAll(t, JSONL, testHeader(epoch), evs)
	rec := readComplete(t, data)
	if len(rec.Events) != len(evs) {
		t.Fatalf("read %d events, wrote %d", len(rec.Events), len(evs))
	}
	for i, want := range evs {
		got := rec.Events[i]
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if !bytes.Equal(wj, gj) || !got.At.Equal(want.At) {
			t.Errorf("event %d (%s):\nwrote %s\nread  %s", i, want.Kind, wj, gj)
		}
		if s := got.Sample; s != nil {
			if s.Offset != want.Offset || !s.At.Equal(want.At) {
				t.Errorf("sample at %v %v, want its event's %v %v", s.Offset, s.At, want.Offset, want.At)
			}
			// Derived again by the reader: the instruments as Derive makes
			// them of the recorded INFO and /proc.
			d := *s
			source.Derive(&d)
			if d.COW != s.COW || d.Footprint != s.Footprint || !s.Footprint.OK {
				t.Errorf("instruments not derived on reading: %v %v", s.COW, s.Footprint)
			}
		}
	}
	sample := data[bytes.Index(data, []byte(`"kind":"sample"`)):]
	sample = sample[:bytes.IndexByte(sample, '\n')]
	for _, key := range []string{`"cow"`, `"footprint"`, `"save"`, `"at"`, `"offset`} {
		if bytes.Contains(sample, []byte(key)) {
			t.Errorf("a sample's line holds %s, which is derived", key)
		}
	}
	if bytes.Contains(data, []byte("save_started")) {
		t.Error("the recording holds a save_started event, which is derived")
	}
}

// TestAbsentIsNotZero: a figure absent and a figure 0 read back as they
// were.
func TestAbsentIsNotZero(t *testing.T) {
	epoch := time.Now()
	s := &source.Sample{Seq: 1}
	s.Info.UsedMemory = source.Some[int64](0)
	s.OpsPerSec = source.Some(0.0)
	s.Info.CurrentForkPerc = source.Opt[float64]{V: 3, OK: false} // absent, with a stale value
	evs := []source.Event{{Node: "n1", Kind: source.EventSample, Offset: time.Second, Sample: s}}
	got := readComplete(t, writeAll(t, JSONL, testHeader(epoch), evs)).Events[0].Sample
	if got.Info.UsedMemory != source.Some[int64](0) || got.OpsPerSec != source.Some(0.0) || got.Info.RSS.OK || got.Info.CurrentForkPerc.OK {
		t.Errorf("used_memory %v, ops %v, rss %v, fork perc %v", got.Info.UsedMemory, got.OpsPerSec, got.Info.RSS, got.Info.CurrentForkPerc)
	}
}

// TestFormatText: a Format reads and writes its name (jsonl, csv) as a
// flag's value; anything else is an error that names the choices, and
// JSONL is the zero value.
func TestFormatText(t *testing.T) {
	for _, want := range []Format{JSONL, CSV} {
		text, err := want.MarshalText()
		var got Format
		if err != nil || got.UnmarshalText(text) != nil || got != want {
			t.Errorf("%v: marshalled %q (%v), read back as %v", want, text, err, got)
		}
	}
	if string(must(CSV.MarshalText())) != "csv" || JSONL.String() != "jsonl" || Format(0) != JSONL {
		t.Errorf("names: %q, %q", must(CSV.MarshalText()), JSONL.String())
	}
	f := CSV
	for _, bad := range []string{"", "json", "JSONL", "tsv"} {
		if err := f.UnmarshalText([]byte(bad)); err == nil || !strings.Contains(err.Error(), "use jsonl or csv") || f != CSV {
			t.Errorf("%q: %v, format now %v", bad, err, f)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestEventsStopsWhereTheLoopDoes: a loop over Events that stops leaves
// the Scanner at the next event, for Next or another loop to go on from.
func TestEventsStopsWhereTheLoopDoes(t *testing.T) {
	data := writeAll(t, JSONL, testHeader(time.Now()), someEvents(10))
	evs := readComplete(t, data).Events
	sc, err := NewScanner(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var got []string
	for ev, err := range sc.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, fmt.Sprint(ev.Kind, ev.Offset)); len(got) == 3 {
			break
		}
	}
	if ev, ok := sc.Next(); ok {
		got = append(got, fmt.Sprint(ev.Kind, ev.Offset))
	}
	for ev := range sc.Events() {
		got = append(got, fmt.Sprint(ev.Kind, ev.Offset))
	}
	if len(got) != len(evs) || sc.Err() != nil {
		t.Fatalf("%d events (%v), want %d", len(got), sc.Err(), len(evs))
	}
	for i, ev := range evs {
		if want := fmt.Sprint(ev.Kind, ev.Offset); got[i] != want {
			t.Fatalf("event %d: %s, want %s", i, got[i], want)
		}
	}
}

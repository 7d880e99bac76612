package record

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// TestPrecisionKept: a sample is written at the precision precision.go
// names (t to the microsecond, ops/s whole, PING to the microsecond and
// its min, max and in-flight age to two figures, a save's ETA to the
// millisecond, server_time_usec to the millisecond), read back so, every
// other figure exactly, and the watcher's own sample is left as it was.
func TestPrecisionKept(t *testing.T) {
	epoch := time.Now().Round(0)
	off := 1234567891 * time.Nanosecond
	s := &source.Sample{
		Seq: 1, Offset: off, At: epoch.Add(off),
		OpsPerSec:       source.Some(12345.678901),
		WriterOpsPerSec: source.Some(0.04),
		Ping:            source.Latency{Count: 7, Min: 15473 * time.Nanosecond, P50: 102 * time.Microsecond, Max: 11628237 * time.Nanosecond, InFlight: 83855 * time.Nanosecond, Interval: 2 * time.Millisecond},
		Save:            &source.SaveProgress{Kind: source.SaveFork, Started: 7, Elapsed: 2200375710, ETA: source.Some[time.Duration](25498972695)},
	}
	s.Info.UsedMemory = source.Some[int64](60058123)
	s.Info.ServerTimeUsec = source.Some[int64](1796169245616098)
	orig := *s
	origSave := *s.Save
	data := writeAll(t, "jsonl", testHeader(epoch), []source.Event{{Node: "n1", Kind: source.EventSample, Offset: off, At: s.At, Sample: s}})
	for _, want := range []string{`"t":1.234568,`, `"ops_per_sec":12346,`, `"writer_ops_per_sec":0,`,
		`"min_us":15,`, `"p50_us":102,`, `"max_us":12000,`, `"in_flight_us":84,`, `"interval_us":2000`,
		`"elapsed_s":2.2,`, `"eta_s":25.499`, `"used_memory":60058123,`, `"server_time_usec":1796169245616000,`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the line lacks %s:\n%s", want, data)
		}
	}
	if orig.OpsPerSec != s.OpsPerSec || orig.Ping != s.Ping || !reflect.DeepEqual(origSave, *s.Save) {
		t.Errorf("the watcher's sample was changed: %+v", s)
	}
	rec, err := Read(bytes.NewReader(data))
	if err != nil || len(rec.Events) != 1 {
		t.Fatalf("read back: %v, %d events", err, len(rec.Events))
	}
	got := rec.Events[0].Sample
	if got.OpsPerSec.V != 12346 || got.Ping.Min != 15*time.Microsecond || got.Save.ETA.V != 25499*time.Millisecond ||
		got.Offset != 1234568*time.Microsecond || got.Info.UsedMemory.V != 60058123 {
		t.Errorf("read back %+v", *got)
	}
	if strings.Count(string(data), "\n") != 2 {
		t.Errorf("want a header and one line:\n%s", data)
	}
}

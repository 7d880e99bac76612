package record

import (
	"encoding/json"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// The codec question of issue 17: would encoding/json (struct tags and one
// Opt marshaller) serve instead of this package's reflection codec? These
// benchmarks set the two engines side by side on the whole sample lines of
// the busy real recording: ...JSON encodes the types as they are (Go field
// names, an Opt as its two fields V and OK, durations in nanoseconds,
// absent fields kept), so its lines are not this format's and what it
// measures is the engine; BenchmarkCodecEncodeTagged (codec_tagged_test.go)
// is the tagged prototype, which writes this format's very lines.
//
//	go test -run '^$' -bench 'Codec' -benchmem ./source/record/

func busySamples(b *testing.B) ([]source.Event, *Header) {
	return recordedSamples(b, "busy")
}

// recordedSamples are the sample events of testdata's real recording
// NAME-two-servers.jsonl.zst (idle or busy), with its header.
func recordedSamples(b testing.TB, name string) ([]source.Event, *Header) {
	b.Helper()
	rf, err := OpenFile("testdata/" + name + "-two-servers.jsonl.zst")
	if err != nil {
		b.Fatal(err)
	}
	defer rf.Close()
	sc, err := rf.ScanFrom(0)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	var evs []source.Event
	for sc.Next() {
		if ev := sc.Event(); ev.Kind == source.EventSample {
			evs = append(evs, ev)
		}
	}
	h := rf.Header
	return evs, &h
}

func BenchmarkCodecEncodeThis(b *testing.B) {
	evs, h := busySamples(b)
	n, i := 0, 0
	for b.Loop() {
		n += len(encodeEvent(evs[i%len(evs)], h.Epoch))
		i++
	}
	b.ReportMetric(float64(n)/float64(i), "bytes/line")
}

func BenchmarkCodecEncodeJSON(b *testing.B) {
	evs, _ := busySamples(b)
	n, i := 0, 0
	for b.Loop() {
		line, err := json.Marshal(evs[i%len(evs)])
		if err != nil {
			b.Fatal(err)
		}
		n += len(line)
		i++
	}
	b.ReportMetric(float64(n)/float64(i), "bytes/line")
}

func BenchmarkCodecDecodeThis(b *testing.B) {
	evs, h := busySamples(b)
	lines := make([][]byte, len(evs))
	for i, ev := range evs {
		lines[i] = encodeEvent(ev, h.Epoch)
	}
	i := 0
	for b.Loop() {
		if _, err := decodeEvent(lines[i%len(lines)], h, map[source.NodeID]*source.Sample{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkCodecDecodeJSON(b *testing.B) {
	evs, _ := busySamples(b)
	lines := make([][]byte, len(evs))
	for i, ev := range evs {
		var err error
		if lines[i], err = json.Marshal(ev); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		var ev source.Event
		if err := json.Unmarshal(lines[i%len(lines)], &ev); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

package report

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

func bigRecording(t *testing.T, samples int) []byte {
	t.Helper()
	var b bytes.Buffer
	epoch := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	w, err := record.NewWriter(&b, "jsonl", record.Header{VKWatch: "test", Epoch: epoch,
		Servers: []record.ServerInfo{{Node: "a", Addr: "a"}, {Node: "b", Addr: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range samples {
		off := time.Duration(i) * 100 * time.Millisecond
		node := source.NodeID([]string{"a", "b"}[i%2])
		// Seq steps by two per node: no sample follows its node's previous
		// one, so each is written whole (no delta), and a piece reads on
		// its own; a recording of delta samples is read whole.
		s := &source.Sample{Seq: uint64(i), Offset: off, At: epoch.Add(off)}
		s.Info.UsedMemory = source.Some(int64(i))
		if err := w.Write(source.Event{Node: node, Kind: source.EventSample, Offset: off, At: s.At, Sample: s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadRecordingInPieces: read in parallel pieces, a recording gives
// what record.Read gives, event for event; a bad line inside the first
// piece is record.Read's own error, naming its line; a cut last line is
// Truncated.
func TestReadRecordingInPieces(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Fatal("this test needs two CPUs to cut the recording in pieces")
	}
	data := bigRecording(t, 6000)
	if len(data) < 2*minPiece {
		t.Fatalf("recording of %d bytes: too small for two pieces", len(data))
	}
	want, err := record.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readRecording(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(want.Events) || !reflect.DeepEqual(got, want) {
		t.Fatalf("in pieces: %d events, record.Read: %d; or they differ", len(got.Events), len(want.Events))
	}

	bad := bytes.Clone(data)
	i := bytes.Index(bad[len(bad)/4:], []byte(`"kind":"sample"`)) + len(bad)/4
	copy(bad[i:], `"kind":"xample"`)
	_, wantErr := record.Read(bytes.NewReader(bad))
	_, gotErr := readRecording(bad)
	if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() {
		t.Errorf("bad line: %v; record.Read says %v", gotErr, wantErr)
	}

	cut := data[:len(data)-10]
	r, err := readRecording(cut)
	if err != nil || !r.Truncated || len(r.Events) != len(want.Events)-1 {
		t.Errorf("cut short: %v, truncated %v, %d events of %d", err, r != nil && r.Truncated, len(r.Events), len(want.Events))
	}
}

package record

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vkwatch/vkwatch/source"
)

func writeCompressed(t *testing.T, c Compression, h Header, evs []source.Event, flushEach bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewCompressedWriter(&buf, "jsonl", c, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
		if flushEach {
			w.mu.Lock()
			w.flushLocked()
			w.mu.Unlock()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// spread is events spaced so that they span several compressed frames.
func spread(t *testing.T, epoch time.Time) []source.Event {
	var evs []source.Event
	for seed := int64(1); seed <= 6; seed++ {
		for _, ev := range fullEvents(t, epoch, seed) {
			ev.Offset += time.Duration(seed) * 7 * time.Second
			ev.At = epoch.Add(ev.Offset)
			if ev.Sample != nil && ev.Kind == source.EventSample {
				ev.Sample.Offset, ev.Sample.At = ev.Offset, ev.At
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

func TestCompressedRoundTrip(t *testing.T) {
	epoch := time.Now().Round(0)
	evs := spread(t, epoch)
	for _, c := range []Compression{Zstd, Gzip} {
		data := writeCompressed(t, c, testHeader(epoch), evs, false)
		if sniff(data) != c {
			t.Fatalf("%s recording starts %x", c, data[:8])
		}
		rec, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if rec.Truncated || len(rec.Events) != len(evs) {
			t.Fatalf("%s: read %d of %d events, truncated %v", c, len(rec.Events), len(evs), rec.Truncated)
		}
		for i := range evs {
			if !reflect.DeepEqual(norm(evs[i]), norm(rec.Events[i])) {
				t.Fatalf("%s: event %d differs after the round trip", c, i)
			}
		}
	}
}

// TestCompressedCutShort cuts a compressed recording, flushed after every
// event, at many lengths: each prefix reads without error, as a prefix of
// the events, truncated when it is short of the whole.
func TestCompressedCutShort(t *testing.T) {
	epoch := time.Now().Round(0)
	evs := spread(t, epoch)
	for _, c := range []Compression{Zstd, Gzip} {
		data := writeCompressed(t, c, testHeader(epoch), evs, true)
		most := 0
		for _, n := range cutPoints(c, data) {
			rec, err := Read(bytes.NewReader(data[:n]))
			if err != nil {
				// Only a cut inside the header line may fail, and says so.
				if most > 0 || !bytes.Contains([]byte(err.Error()), []byte("header")) {
					t.Fatalf("%s cut at %d of %d: %v", c, n, len(data), err)
				}
				continue
			}
			if !rec.Truncated {
				t.Fatalf("%s cut at %d of %d reads as whole", c, n, len(data))
			}
			if len(rec.Events) < most {
				t.Fatalf("%s cut at %d reads %d events, a shorter cut read %d", c, n, len(rec.Events), most)
			}
			most = len(rec.Events)
			for i := range rec.Events {
				if !reflect.DeepEqual(norm(evs[i]), norm(rec.Events[i])) {
					t.Fatalf("%s cut at %d: event %d differs", c, n, i)
				}
			}
		}
		// Flushed after every event: a cut loses at most the events of the
		// last block, so most were read by the last cut.
		if most < len(evs)-2 {
			t.Errorf("%s: the longest cut read %d of %d events", c, most, len(evs))
		}
	}
}

// cliReads is the output of the command line tool name (with args)
// reading a recording of c from its stdin, and that recording and its
// plain JSON Lines; the test fails without the tool.
func cliReads(t *testing.T, c Compression, name string, args ...string) (out, data, plain []byte) {
	t.Helper()
	tool, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (apt-get install zstd gzip): the test needs it", name)
	}
	epoch := time.Now().Round(0)
	evs := spread(t, epoch)
	data = writeCompressed(t, c, testHeader(epoch), evs, false)
	cmd := exec.Command(tool, args...)
	cmd.Stdin = bytes.NewReader(data)
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, data, writeAll(t, "jsonl", testHeader(epoch), evs)
}

// TestZstdCLIReads: the zstd command line tool reads a recording as JSON
// Lines, skipping the frame marks.
func TestZstdCLIReads(t *testing.T) {
	out, data, plain := cliReads(t, Zstd, "zstdcat")
	if !bytes.Equal(out, plain) {
		t.Errorf("zstdcat gives %d bytes, the plain recording is %d", len(out), len(plain))
	}
	if n := bytes.Count(data, []byte{0x5b, 0x2a, 0x4d, 0x18}); n < 4 {
		t.Errorf("%d frame marks in %d bytes, want one every %s", n, len(data), frameEvery)
	}
}

// TestGzipCLIReads: gzip -dc reads a .gz recording, its marks, trailer
// and end member included, as the very JSON Lines of the plain one, and
// gzip -t finds it whole.
func TestGzipCLIReads(t *testing.T) {
	out, data, plain := cliReads(t, Gzip, "gzip", "-dc")
	if !bytes.Equal(out, plain) {
		t.Errorf("gzip -dc gives %d bytes, the plain recording is %d", len(out), len(plain))
	}
	test := exec.Command("gzip", "-t")
	test.Stdin = bytes.NewReader(data)
	if out, err := test.CombinedOutput(); err != nil {
		t.Errorf("gzip -t: %v: %s", err, out)
	}
	if n := bytes.Count(data, []byte{0x1f, 0x8b, 8, 4}); n < 5 {
		t.Errorf("%d gzip members with an extra field in %d bytes, want one every %s", n, len(data), frameEvery)
	}
}

// TestOpenCutShort: a compressed recording cut short anywhere after its
// header opens for seeking (its frames found without the trailer), says
// it was cut short, and its end is its last event read whole.
func TestOpenCutShort(t *testing.T) {
	epoch := time.Now().Round(0)
	evs := spread(t, epoch)
	dir := t.TempDir()
	for _, c := range []Compression{Zstd, Gzip} {
		data := writeCompressed(t, c, testHeader(epoch), evs, true)
		for _, n := range cutPoints(c, data) {
			rec, err := Read(bytes.NewReader(data[:n]))
			if err != nil {
				continue // inside the header line (TestCompressedCutShort)
			}
			path := filepath.Join(dir, fmt.Sprintf("cut.jsonl.%s", c))
			if err := os.WriteFile(path, data[:n], 0o644); err != nil {
				t.Fatal(err)
			}
			rf, err := OpenFile(path)
			if err != nil {
				t.Fatalf("%s cut at %d of %d: %v", c, n, len(data), err)
			}
			_, last := rec.Span()
			if !rf.Truncated || (len(rec.Events) > 0 && rf.End != last) {
				t.Errorf("%s cut at %d of %d: truncated %v, end %s; read whole it ends at %s", c, n, len(data), rf.Truncated, rf.End, last)
			}
			rf.Close()
		}
	}
}

// cutPoints are where TestCompressedCutShort cuts a recording: every 97
// bytes, and exactly at each frame (gzip member) start and at the end mark,
// where what is left is a stream of whole frames, valid but for the end
// mark it lacks.
func cutPoints(c Compression, data []byte) []int {
	var ns []int
	for n := 64; n < len(data); n += 97 {
		ns = append(ns, n)
	}
	starts := [][]byte{{0x28, 0xb5, 0x2f, 0xfd}, {0x5b, 0x2a, 0x4d, 0x18}, {0x5c, 0x2a, 0x4d, 0x18}}
	if c == Gzip {
		starts = [][]byte{{0x1f, 0x8b, 0x08}}
	}
	var at []int
	for _, m := range starts {
		for i := 64; i < len(data); i++ {
			if bytes.HasPrefix(data[i:], m) {
				at = append(at, i)
			}
		}
	}
	if len(at) < 3 {
		panic(fmt.Sprintf("%s: %d frame starts found: the writer no longer frames as this test expects", c, len(at)))
	}
	ns = append(ns, at...)
	sort.Ints(ns)
	return ns
}

// TestVersion3CompressedHasNoEndMark: a compressed recording of format
// version 3 (written before the end mark) reads as whole without one, and
// the same stream saying version 4 reads as cut short.
func TestVersion3CompressedHasNoEndMark(t *testing.T) {
	epoch := time.Now().Round(0)
	evs := spread(t, epoch)
	plain := writeAll(t, "jsonl", testHeader(epoch), evs)
	v4 := []byte(fmt.Sprintf(`"version":%d`, Version))
	if !bytes.Contains(plain, v4) {
		t.Fatalf("no %s in the header", v4)
	}
	for _, v := range []int{3, 4} {
		body := bytes.Replace(plain, v4, []byte(fmt.Sprintf(`"version":%d`, v)), 1)
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := Read(bytes.NewReader(enc.EncodeAll(body, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Events) != len(evs) || rec.Truncated != (v >= 4) {
			t.Errorf("version %d without an end mark: %d of %d events, truncated %v (%s)", v, len(rec.Events), len(evs), rec.Truncated, rec.Why)
		}
	}
}

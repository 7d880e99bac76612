package record

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// someEvents are a few seconds of two servers' samples, a command and a
// save, as a watcher would emit them.
func someEvents(n int) []source.Event {
	var evs []source.Event
	for i := range n {
		off := time.Duration(i) * 100 * time.Millisecond
		node := source.NodeID([]string{"n1", "n2"}[i%2])
		s := &source.Sample{Seq: uint64(i / 2), Offset: off}
		s.Info.UsedMemory = source.Some(int64(1000 + i))
		s.Info.RSS = source.Some(int64(2000 + i))
		s.Info.RDBInProgress = source.Some[int64](0)
		if i > n/3 && i < 2*n/3 {
			s.Info.RDBInProgress = source.Some[int64](1)
			s.Info.KeysProcessed, s.Info.KeysTotal = source.Some(int64(i)), source.Some(int64(n))
			s.Info.CurrentCOW = source.Some(int64(i * 10))
		}
		s.OpsPerSec = source.Some(float64(i) / 3)
		evs = append(evs, source.Event{Node: node, Kind: source.EventSample, Offset: off, Sample: s})
	}
	return evs
}

// TestHostileRecordings: what a file says cannot make a reader panic or
// hold more than a line; a line it cannot read is an error naming it.
func TestHostileRecordings(t *testing.T) {
	head := string(writeAll(t, JSONL, testHeader(time.Now()), nil))
	good := `{"t_ns":1,"node":"n1","kind":"sample","sample":{"seq":0}}` + "\n"
	for _, c := range []struct{ name, body, want string }{
		{"a control character", good + "{\"t_ns\":2,\"node\":\"n\x01\",\"kind\":\"connected\"}\n" + good, "line 3: jsontext: invalid character '\\x01' in string"},
		{"a number too big", good + `{"t_ns":1e99,"kind":"sample","sample":{}}` + "\n" + good, `unmarshal JSON number into Go time.Duration within "/t_ns"`},
		{"a figure too big", good + `{"t_ns":2,"kind":"sample","sample":{"info":{"used_memory":99999999999999999999}}}` + "\n" + good, `unmarshal JSON number 99999999999999999999 into Go int64 within "/sample/info/used_memory": value out of range`},
		{"a word for a number", good + `{"t_ns":2,"kind":"sample","sample":{"seq":"x"}}` + "\n" + good, `JSON string into Go uint64 within "/sample/seq"`},
		{"a sample without one", good + `{"t_ns":2,"kind":"sample"}` + "\n" + good, "line 3: a sample event without its sample"},
		{"not JSON", good + "hello\n" + good, "line 3: jsontext: invalid character 'h' at start of value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(head + c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "recording line 3: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, c.want)
			}
		})
	}
	// A server's text that is not UTF-8 is recorded with U+FFFD for its bad
	// bytes; read, a line that is not UTF-8 is an error.
	bad := []source.Event{{Node: "n1", Kind: source.EventDisconnected, Offset: time.Second, Err: "ERR \xff\xfe bytes"}}
	if ev := readComplete(t, writeAll(t, JSONL, testHeader(time.Now()), bad)).Events[0]; ev.Err != "ERR \ufffd\ufffd bytes" {
		t.Errorf("invalid UTF-8 recorded as %q", ev.Err)
	}
	if _, err := Read(strings.NewReader(head + good + "{\"t_ns\":2,\"kind\":\"disconnected\",\"err\":\"\xff\"}\n")); err == nil || !strings.Contains(err.Error(), "line 3: jsontext: invalid UTF-8") {
		t.Errorf("a line with invalid UTF-8: %v", err)
	}
	// An unknown kind, a later vkwatch's, is skipped.
	rec, err := Read(strings.NewReader(head + good + `{"t_ns":3,"kind":"meteor","meteor":{}}` + "\n" + good))
	if err != nil || len(rec.Events) != 2 {
		t.Errorf("unknown kind: %v, %d events", err, len(rec.Events))
	}
}

// TestHugeLine: a line longer than MaxLine is an error naming it, read
// without holding more than about a line.
func TestHugeLine(t *testing.T) {
	const maxLine = 1 << 20
	head := writeAll(t, JSONL, testHeader(time.Now()), nil)
	r := io.MultiReader(bytes.NewReader(head), strings.NewReader(`{"t_ns":1,"err":"`), endless{}, strings.NewReader("\"}\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sc, err := NewScanner(r)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sc.maxLine = maxLine
	for _, err = range sc.Events() {
	}
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than 1 MiB") {
		t.Errorf("error %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*maxLine {
		t.Errorf("a huge line cost %d MiB of allocations", grew>>20)
	}
}

// endless is an endless stream of x.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestOtherVersions: a recording of another format version fails with one
// line that names it and says what to do.
func TestOtherVersions(t *testing.T) {
	for _, c := range []struct {
		head, want string
	}{
		{`{"format":"vkwatch-recording","version":7,"vkwatch":"v1.2.0","epoch":"2026-12-01T08:00:00Z"}`,
			`recording format version 7 is an early format this vkwatch does not read (it reads 8); replay it with vkwatch "v1.2.0"`},
		{`{"format":"vkwatch-recording","version":9,"epoch":"2026-12-01T08:00:00Z"}`,
			"recording format version 9 is newer than this vkwatch reads (8); upgrade vkwatch"},
		{`{"format":"something else"}`, "not a vkwatch recording"},
	} {
		_, err := Read(strings.NewReader(c.head + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.head, err, c.want)
		}
	}
}

// TestCutAtEveryByte: a .zst recording cut at every byte around each frame
// mark and the index reads as cut short, up to what was whole before the
// cut, never an error; the whole file reads whole. The same cuts,
// opened as files, index and seek.
func TestCutAtEveryByte(t *testing.T) {
	evs := someEvents(60)
	data := writeAllAs(t, Options{Compression: Zstd, FrameEvery: time.Second}, testHeader(time.Now()), evs)
	whole := readComplete(t, data)
	dir := t.TempDir()
	rf := openBytes(t, dir, data)
	if len(rf.Marks) < 5 || rf.Truncated {
		t.Fatalf("%d marks, truncated %v", len(rf.Marks), rf.Truncated)
	}
	var cuts []int
	for _, m := range append(rf.Marks, Mark{Pos: int64(len(data)) - 40}) {
		for d := -24; d <= 24; d++ {
			if at := int(m.Pos) + d; at > 0 && at < len(data) {
				cuts = append(cuts, at)
			}
		}
	}
	for _, at := range cuts {
		rec, err := Read(bytes.NewReader(data[:at]))
		if err != nil {
			if strings.Contains(err.Error(), "header") {
				continue // cut inside the header's frame
			}
			t.Fatalf("cut at %d of %d: %v", at, len(data), err)
		}
		if !rec.Truncated || len(rec.Events) > len(whole.Events) {
			t.Fatalf("cut at %d of %d: truncated %v, %d events of %d", at, len(data), rec.Truncated, len(rec.Events), len(whole.Events))
		}
		if d := eventsDiffer(whole.Events[:len(rec.Events)], rec.Events); d != "" {
			t.Fatalf("cut at %d: %s", at, d)
		}
		cut := openBytes(t, dir, data[:at])
		if !cut.Truncated || cut.End > rf.End {
			t.Fatalf("cut at %d opened: truncated %v, end %v of %v", at, cut.Truncated, cut.End, rf.End)
		}
		cut.Close()
	}
}

// openBytes opens data as a recording file in dir.
func openBytes(t *testing.T, dir string, data []byte) *File {
	t.Helper()
	path := filepath.Join(dir, "r.jsonl.zst")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rf, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rf.Close() })
	return rf
}

// TestSeeks: a .zst file's index (from its end) and the walk of its frames
// (a file without one) find the same marks; a scan from any time starts at
// the last mark at or before it and reads the very events a whole read has
// from there, with the derived figures of a tracker that started there.
func TestSeeks(t *testing.T) {
	const frameEvery = time.Second
	evs := someEvents(200)
	data := writeAllAs(t, Options{Compression: Zstd, FrameEvery: frameEvery}, testHeader(time.Now()), evs)
	dir := t.TempDir()
	rf := openBytes(t, dir, data)
	walked, err := rf.walkZstd()
	if err != nil || len(walked) != len(rf.Marks) || len(walked) < 10 {
		t.Fatalf("walk: %v, %d marks; the index has %d", err, len(walked), len(rf.Marks))
	}
	for i := range walked {
		if walked[i] != rf.Marks[i] {
			t.Fatalf("mark %d: walked %v, indexed %v", i, walked[i], rf.Marks[i])
		}
	}
	whole := withoutStarts(readComplete(t, data).Events)
	for _, at := range []time.Duration{0, 3 * time.Second, 9500 * time.Millisecond, rf.End} {
		scanFromLikeWhole(t, rf, whole, at, frameEvery+time.Second)
	}
	// Without its index (cut short), the walk finds the marks.
	cut := openBytes(t, dir, data[:len(data)*2/3])
	if !cut.Truncated || len(cut.Marks) < len(rf.Marks)/2 || cut.Marks[3] != rf.Marks[3] {
		t.Fatalf("cut: truncated %v, %d marks", cut.Truncated, len(cut.Marks))
	}
}

// TestPlainSeeks: a plain recording has no marks; a scan from any time
// bisects the file for a line at least a second before it and reads the
// very events a whole read has from there.
func TestPlainSeeks(t *testing.T) {
	data := writeAll(t, JSONL, testHeader(time.Now()), someEvents(3000))
	rf := openBytes(t, t.TempDir(), data)
	if rf.Comp != Plain || len(data) < 8*plainMarkEvery {
		t.Fatalf("compression %d, %d bytes: want a plain file of several bisection steps", rf.Comp, len(data))
	}
	whole := withoutStarts(readComplete(t, data).Events)
	for _, at := range []time.Duration{0, 500 * time.Millisecond, 90 * time.Second, 201 * time.Second, rf.End} {
		// 64 KiB of these events is about 35 s of them.
		got := scanFromLikeWhole(t, rf, whole, at, 40*time.Second)
		if at > 60*time.Second && at-got[0].Offset < plainSlack {
			t.Errorf("from %v: the scan starts at %v, less than %v before", at, got[0].Offset, plainSlack)
		}
	}
}

// scanFromLikeWhole scans rf from at and checks that it starts at or
// within slack before at and reads the events of whole from there.
func scanFromLikeWhole(t *testing.T, rf *File, whole []source.Event, at, slack time.Duration) []source.Event {
	t.Helper()
	sc, err := rf.ScanFrom(at)
	if err != nil {
		t.Fatal(err)
	}
	var got []source.Event
	for ev, err := range sc.Events() {
		if err != nil {
			t.Fatalf("from %v: %v", at, err)
		}
		got = append(got, ev)
	}
	sc.Close()
	// A save running at the mark is seen starting there, as by a
	// watcher connected at that moment: its save_started differs.
	got = withoutStarts(got)
	if len(got) == 0 {
		t.Fatalf("from %v: no events", at)
	}
	if got[0].Offset > at || at-got[0].Offset > slack {
		t.Fatalf("from %v: the first event at %v, want at most %v before", at, got[0].Offset, slack)
	}
	i := 0
	for whole[i].Offset != got[0].Offset {
		i++
	}
	if len(got) != len(whole)-i {
		t.Fatalf("from %v: %d events, want the whole's %d from %v", at, len(got), len(whole)-i, got[0].Offset)
	}
	for j := range got {
		if a, b := whole[i+j], got[j]; a.Offset != b.Offset || a.Node != b.Node || a.Kind != b.Kind {
			t.Fatalf("from %v, event %d: %s %s at %v, want %s %s at %v", at, j, b.Node, b.Kind, b.Offset, a.Node, a.Kind, a.Offset)
		}
	}
	return got
}

func withoutStarts(evs []source.Event) []source.Event {
	var out []source.Event
	for _, ev := range evs {
		if ev.Kind != source.EventSaveStarted {
			out = append(out, ev)
		}
	}
	return out
}

// FuzzRead: nothing a file holds makes a reader panic; what it reads, it
// reads whole or says why not.
func FuzzRead(f *testing.F) {
	head := writeAll(f, JSONL, testHeader(time.Unix(1e9, 0)), nil)
	f.Add(writeAll(f, JSONL, testHeader(time.Unix(1e9, 0)), someEvents(6)))
	f.Add(writeAllAs(f, Options{Compression: Zstd}, testHeader(time.Unix(1e9, 0)), someEvents(6)))
	f.Add(append(head, `{"t_ns":1,"node":"n","kind":"sample","sample":{"info":{"rdb_in_progress":1,"keys_total":-5}}}`+"\n"...))
	f.Add(append(head, `{"t_ns":1,"kind":"topology","topology":{"shards":[{"slots":[{"start":-1}]}]}}`+"\n"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Read(bytes.NewReader(data))
		if err != nil {
			// What was read before the bad line comes with the error,
			// which is one line.
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("an error of more than one line: %q", err)
			}
			return
		}
		for _, ev := range rec.Events {
			if ev.Kind == 0 || ev.Kind == source.EventSample && ev.Sample == nil {
				t.Fatalf("an event read that is none: %+v", ev)
			}
		}
	})
}

package record

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"UsedMemory":       "used_memory",
		"RSS":              "rss",
		"RDBLastCOW":       "rdb_last_cow",
		"ProcessID":        "process_id",
		"P50":              "p50",
		"Ping10s":          "ping10s",
		"PeakProcRSSDelta": "peak_proc_rss_delta",
		"ForklessETA":      "forkless_eta",
		"InFlight":         "in_flight",
		"WriterOpsPerSec":  "writer_ops_per_sec",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecimalExact(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	vals := []int64{0, 1, -1, 999, 1000, 1_000_000_000, 1_500_000_000, -2_000_000_001, 1<<53 + 7}
	for i := 0; i < 2000; i++ {
		vals = append(vals, r.Int63n(1<<50)-1<<49)
	}
	for _, v := range vals {
		for _, scale := range []int{9, 3} {
			s := formatDecimal(v, scale)
			got, err := parseDecimal(s, scale)
			if err != nil || got != v {
				t.Fatalf("%d at scale %d -> %q -> %d, %v", v, scale, s, got, err)
			}
		}
	}
	if s := formatDecimal(1_500_000_000, 9); s != "1.5" {
		t.Errorf("1.5 s written as %q", s)
	}
}

// filler sets every exported field of a value to a distinct present value,
// so the round-trip test covers fields added to source/types.go later.
type filler struct {
	r     *rand.Rand
	epoch time.Time
}

func (f *filler) fill(v reflect.Value) {
	t := v.Type()
	switch {
	case isOpt(t):
		f.fill(v.Field(0))
		v.Field(1).SetBool(true)
		return
	case t == durationType:
		v.SetInt(f.r.Int63n(int64(time.Hour))) // nanosecond detail included
		return
	case t == timeType:
		v.Set(reflect.ValueOf(f.epoch.Add(time.Duration(f.r.Int63n(int64(time.Hour))))))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString("s\"é\n" + string(rune('a'+f.r.Intn(26))))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.r.Int63n(1<<40) - 1<<39)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.r.Int63()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.r.NormFloat64() * 1e6)
	case reflect.Slice:
		// Two elements: order and separators both get tested.
		sl := reflect.MakeSlice(t, 2, 2)
		for i := range 2 {
			f.fill(sl.Index(i))
		}
		v.Set(sl)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i))
		}
	default:
		panic("filler: unhandled " + t.String())
	}
}

// normalize puts every time.Time in UTC, in place, so that DeepEqual
// compares instants rather than location pointers, and every sample at the
// precision a recording keeps (precision.go; TestPrecisionKept checks it).
func normalize(v reflect.Value) {
	if v.Type() == reflect.TypeOf(source.Sample{}) && v.CanSet() {
		s := v.Interface().(source.Sample)
		v.Set(reflect.ValueOf(*recordedSample(&s)))
	}
	if v.Type() == reflect.TypeOf(source.Event{}) && v.CanSet() {
		// t to offsetStep, as the writer writes it.
		ev := v.Addr().Interface().(*source.Event)
		off := ev.Offset.Round(offsetStep)
		ev.At, ev.Offset = ev.At.Add(off-ev.Offset), off
	}
	switch {
	case v.Type() == timeType:
		if v.CanSet() {
			v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC()))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				normalize(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			normalize(v.Index(i))
		}
	}
}

func norm[T any](x T) T {
	normalize(reflect.ValueOf(&x).Elem())
	return x
}

func testHeader(epoch time.Time) Header {
	return Header{
		VKWatch:  "test",
		Epoch:    epoch,
		Settings: map[string]string{"interval": "150ms", "writers": "8"},
		Servers:  []ServerInfo{{Node: "n1", Addr: "127.0.0.1:1"}, {Node: "n2", Addr: "127.0.0.1:2"}},
	}
}

// fullEvents builds one event of each kind with every field present.
func fullEvents(t *testing.T, epoch time.Time, seed int64) []source.Event {
	t.Helper()
	f := &filler{r: rand.New(rand.NewSource(seed)), epoch: epoch}
	var evs []source.Event
	off := time.Duration(0)
	for _, k := range source.EventKinds() {
		off += time.Duration(f.r.Int63n(int64(time.Second))) + 1
		ev := source.Event{Node: []source.NodeID{"n1", "n2"}[int(k)%2], Kind: k, Offset: off, At: epoch.Add(off)}
		switch k {
		case source.EventSample, source.EventSaveStarted:
			ev.Sample = new(source.Sample)
			f.fill(reflect.ValueOf(ev.Sample).Elem())
			if k == source.EventSample {
				// The usual case: the sample's time is the event's.
				ev.Sample.Offset, ev.Sample.At = off, ev.At
			}
		case source.EventConnected:
			ev.Identity = new(source.Identity)
			f.fill(reflect.ValueOf(ev.Identity).Elem())
		case source.EventDisconnected:
			ev.Err = "connection refused"
		case source.EventCommand:
			ev.Command = new(source.CommandResult)
			f.fill(reflect.ValueOf(ev.Command).Elem())
			ev.Command.Command = "BGSAVE"
		case source.EventSaveEnded:
			ev.Report = new(source.SaveReport)
			f.fill(reflect.ValueOf(ev.Report).Elem())
		case source.EventTopology:
			ev.Node = "" // the fleet's, not one server's
			ev.Topology = new(source.Topology)
			f.fill(reflect.ValueOf(ev.Topology).Elem())
		}
		evs = append(evs, ev)
	}
	// And one sample with everything absent: absent must stay absent.
	off += time.Millisecond
	evs = append(evs, source.Event{Node: "n1", Kind: source.EventSample, Offset: off, At: epoch.Add(off),
		Sample: &source.Sample{Offset: off, At: epoch.Add(off)}})
	return evs
}

// readComplete reads a recording that was written to the end, and fails
// the test when it does not read, or reads as cut short.
func readComplete(t *testing.T, data []byte) *Recording {
	t.Helper()
	rec, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Truncated {
		t.Fatal("complete recording read as truncated")
	}
	return rec
}

func writeAll(t *testing.T, format string, h Header, evs []source.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, format, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTripEveryField(t *testing.T) {
	epoch := time.Now().Round(0)
	h := testHeader(epoch)
	id := &source.Identity{}
	(&filler{r: rand.New(rand.NewSource(9)), epoch: epoch}).fill(reflect.ValueOf(id).Elem())
	h.Servers[1].Identity = id
	for seed := int64(1); seed <= 20; seed++ {
		evs := fullEvents(t, epoch, seed)
		data := writeAll(t, "jsonl", h, evs)
		rec := readComplete(t, data)
		if len(rec.Events) != len(evs) {
			t.Fatalf("read %d events, wrote %d", len(rec.Events), len(evs))
		}
		for i := range evs {
			if want, got := norm(evs[i]), norm(rec.Events[i]); !reflect.DeepEqual(want, got) {
				t.Fatalf("event %d (%s) differs after round trip:\nwant %+v\n got %+v", i, evs[i].Kind, want, got)
			}
		}
		if !rec.Header.Epoch.Equal(epoch) || rec.Header.Format != FormatName || rec.Header.Version != Version {
			t.Fatalf("header: %+v", rec.Header)
		}
		if want, got := norm(*id), norm(*rec.Header.Servers[1].Identity); !reflect.DeepEqual(want, got) {
			t.Fatalf("identity in header: want %+v got %+v", want, got)
		}
		if !reflect.DeepEqual(rec.Header.Settings, h.Settings) {
			t.Fatalf("settings: %v", rec.Header.Settings)
		}
	}
}

func TestAbsentIsNull(t *testing.T) {
	epoch := time.Now()
	data := writeAll(t, "", testHeader(epoch), []source.Event{{Kind: source.EventSample, Offset: 1, Sample: &source.Sample{Offset: 1, At: epoch.Add(1)}}})
	line := strings.Split(string(data), "\n")[1]
	for _, want := range []string{`"used_memory":null`, `"ops_per_sec":null`, `"save":null`, `"p99_us":0`} {
		if !strings.Contains(line, want) {
			t.Errorf("sample line lacks %s: %s", want, line)
		}
	}
}

func TestTruncatedAndGarbage(t *testing.T) {
	epoch := time.Now()
	evs := fullEvents(t, epoch, 3)
	data := writeAll(t, "jsonl", testHeader(epoch), evs)
	lines := bytes.SplitAfter(data, []byte("\n"))
	headerLen := len(lines[0])
	// Cut in the middle of every event line in turn.
	pos := headerLen
	for i, l := range lines[1:] {
		if len(l) == 0 {
			continue
		}
		for _, cut := range []int{1, len(l) / 2, len(l) - 1} {
			rec, err := Read(bytes.NewReader(data[:pos+cut]))
			if err != nil {
				t.Fatalf("cut in line %d: %v", i+2, err)
			}
			if !rec.Truncated || len(rec.Events) != i {
				t.Fatalf("cut in line %d at %d: truncated=%v events=%d", i+2, cut, rec.Truncated, len(rec.Events))
			}
		}
		pos += len(l)
	}
	// A whole line that is damaged at the end also counts as the crash's.
	bad := append(append([]byte{}, data...), []byte("{\"t\":1,\"kind\n")...)
	if rec, err := Read(bytes.NewReader(bad)); err != nil || !rec.Truncated || len(rec.Events) != len(evs) {
		t.Fatalf("damaged last line: err %v", err)
	}
	// A damaged line in the middle is not a crash: it is an error.
	mid := append(append(append([]byte{}, lines[0]...), []byte("{oops\n")...), bytes.Join(lines[1:], nil)...)
	if _, err := Read(bytes.NewReader(mid)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("damaged middle line: err %v", err)
	}

	for name, in := range map[string]string{
		"empty":  "",
		"text":   "hello world\nsecond line\n",
		"json":   `{"format":"something-else","version":1}` + "\n",
		"binary": "\x00\x01\x02\xff",
		"array":  "[1,2,3]\n",
	} {
		_, err := Read(strings.NewReader(in))
		if !errors.Is(err, ErrNotRecording) || !strings.HasPrefix(err.Error(), "not a vkwatch recording: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := Read(strings.NewReader(`{"format":"vkwatch-recording","version":99,"epoch":"2026-01-01T00:00:00Z"}` + "\n")); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer version: err = %v", err)
	}
	csvData := writeAll(t, "csv", testHeader(epoch), evs)
	if _, err := Read(bytes.NewReader(csvData)); err == nil || !strings.Contains(err.Error(), "CSV") {
		t.Errorf("csv read back: err = %v", err)
	}
}

func TestOlderRecordingMissingFieldsReadsAbsent(t *testing.T) {
	// A recording from before a field existed lacks its key: it reads as absent.
	in := `{"format":"vkwatch-recording","version":1,"epoch":"2026-01-01T00:00:00Z","servers":[{"addr":"a"}]}
{"t":1.25,"server":0,"kind":"sample","sample":{"info":{"used_memory":1024}}}
`
	rec, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	s := rec.Events[0].Sample
	if rec.Events[0].Offset != 1250*time.Millisecond || s.Offset != 1250*time.Millisecond {
		t.Fatalf("offset %v / %v", rec.Events[0].Offset, s.Offset)
	}
	if s.Info.UsedMemory != source.Some[int64](1024) || s.Info.RSS.OK || s.OpsPerSec.OK {
		t.Fatalf("sample %+v", s.Info)
	}
	if want := time.Date(2026, 1, 1, 0, 0, 1, 250_000_000, time.UTC); !rec.Events[0].At.Equal(want) {
		t.Fatalf("at %v", rec.Events[0].At)
	}
}

func TestSecretsNeverWritten(t *testing.T) {
	const pw = "hunter2-secret"
	h := testHeader(time.Now())
	h.Servers[0].Addr = "redis://alice:" + pw + "@127.0.0.1:7000/0"
	h.Servers[1].Identity = &source.Identity{Addr: "valkey://:" + pw + "@127.0.0.1:7001"}
	h.Settings["password"] = pw
	h.Settings["askpass"] = pw
	h.Settings["url"] = "rediss://bob:" + pw + "@host:1"
	evs := []source.Event{
		{Kind: source.EventCommand, Offset: 1, Command: &source.CommandResult{Command: "AUTH " + pw}},
		{Kind: source.EventCommand, Offset: 2, Command: &source.CommandResult{Command: "CONFIG SET requirepass " + pw}},
		{Kind: source.EventCommand, Offset: 3, Command: &source.CommandResult{Command: "HELLO 3 AUTH alice " + pw}},
		{Kind: source.EventConnected, Offset: 4, Identity: &source.Identity{Addr: "redis://:" + pw + "@127.0.0.1:7000"}},
		{Kind: source.EventSaveEnded, Offset: 5, Report: &source.SaveReport{Addr: "redis://:" + pw + "@127.0.0.1:7000"}},
	}
	for _, format := range []string{"jsonl", "csv"} {
		data := writeAll(t, format, h, evs)
		if bytes.Contains(data, []byte(pw)) {
			t.Fatalf("%s recording contains the password:\n%s", format, data)
		}
		if !bytes.Contains(data, []byte("127.0.0.1:7000")) {
			t.Fatalf("%s recording lost the address itself:\n%s", format, data)
		}
	}
	if evs[0].Command.Command != "AUTH "+pw {
		t.Fatal("Write changed the caller's event")
	}
}

func TestCSV(t *testing.T) {
	epoch := time.Now()
	evs := fullEvents(t, epoch, 4)
	data := writeAll(t, "csv", testHeader(epoch), evs)
	first, _, _ := strings.Cut(string(data), "\n")
	if !strings.HasPrefix(first, "# {\"format\":\"vkwatch-recording\"") {
		t.Fatalf("first line %q", first)
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows[0], csvColumns) {
		t.Fatalf("columns %q", rows[0])
	}
	if len(rows) != 1+len(evs) {
		t.Fatalf("%d rows for %d events", len(rows), len(evs))
	}
	for i, ev := range evs {
		if rows[i+1][3] != ev.Kind.String() {
			t.Errorf("row %d kind %q, want %s", i+1, rows[i+1][3], ev.Kind)
		}
	}
	// The all-absent sample: empty cells, not zeros, except ping_count.
	last := rows[len(rows)-1]
	for i, c := range csvColumns {
		switch c {
		case "t", "at", "node", "kind":
			if last[i] == "" {
				t.Errorf("%s empty", c)
			}
		case "ping_count":
			if last[i] != "0" {
				t.Errorf("ping_count %q", last[i])
			}
		default:
			if last[i] != "" {
				t.Errorf("absent %s written as %q", c, last[i])
			}
		}
	}
}

// syncBuffer is a bytes.Buffer safe to read while the Writer's flusher writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func TestFlushesWithinASecond(t *testing.T) {
	var sb syncBuffer
	w, err := NewWriter(&sb, "jsonl", testHeader(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := sb.Len()
	if err := w.Write(source.Event{Kind: source.EventDisconnected, Err: "x"}); err != nil {
		t.Fatal(err)
	}
	// Without Close, the event must reach the file by the flush interval;
	// allow generous slack for a loaded machine.
	deadline := time.Now().Add(5 * time.Second)
	for sb.Len() == before {
		if time.Now().After(deadline) {
			t.Fatal("event not flushed within 5 s")
		}
		time.Sleep(20 * time.Millisecond) // polling the condition, bounded by the deadline
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(source.Event{Kind: source.EventDisconnected}); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

func TestConcurrentWrites(t *testing.T) {
	epoch := time.Now()
	var buf syncBuffer
	w, err := NewWriter(&buf, "jsonl", testHeader(epoch))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for s := 0; s < 4; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := 1; i <= 200; i++ {
				off := time.Duration(i) * time.Millisecond
				w.Write(source.Event{Node: source.NodeID(fmt.Sprint(s)), Kind: source.EventSample, Offset: off,
					Sample: &source.Sample{Offset: off, At: epoch.Add(off), Info: source.Info{UsedMemory: source.Some(int64(i))}}})
			}
		}(s)
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := Read(bytes.NewReader(buf.b.Bytes()))
	if err != nil || rec.Truncated || len(rec.Events) != 800 {
		t.Fatalf("err %v truncated %v events %d", err, rec.Truncated, len(rec.Events))
	}
	last := map[source.NodeID]time.Duration{}
	for _, ev := range rec.Events {
		if ev.Offset <= last[ev.Node] {
			t.Fatalf("node %s: offsets out of order", ev.Node)
		}
		last[ev.Node] = ev.Offset
	}
}

// TestReadsVersion1 reads a recording written by vkwatch before node ids
// (format version 1: a real session of two redis-server 7.0.15, a BGSAVE on
// one and a BGREWRITEAOF on the other): every event gets its server's
// address as node id, and re-deriving the reports from its samples gives
// the reports the recording holds.
func TestReadsVersion1(t *testing.T) {
	f, err := os.Open("testdata/v1-two-servers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := Read(f)
	if err != nil || rec.Truncated {
		t.Fatalf("read: %v (truncated %v)", err, rec != nil && rec.Truncated)
	}
	if rec.Header.Version != 1 || len(rec.Header.Servers) != 2 {
		t.Fatalf("header %+v", rec.Header)
	}
	nodes := map[source.NodeID]bool{}
	for _, si := range rec.Header.Servers {
		if si.Node == "" || string(si.Node) != si.Addr {
			t.Fatalf("server %+v: want its address as node id", si)
		}
		nodes[si.Node] = true
	}
	var recorded []source.SaveReport
	perNode := map[source.NodeID]int{}
	for _, ev := range rec.Events {
		if !nodes[ev.Node] {
			t.Fatalf("event %s for node %q, not in the header", ev.Kind, ev.Node)
		}
		// Recorded before the instruments: they are derived from the
		// recorded INFO and /proc figures by the watcher's rule.
		if s := ev.Sample; ev.Kind == source.EventSample && s.Info.RSS.OK {
			want := *s
			source.Derive(&want)
			if !want.Footprint.OK || s.Footprint != want.Footprint || s.FootprintFrom != want.FootprintFrom ||
				s.COW != want.COW || s.COWFrom != want.COWFrom {
				t.Fatalf("sample %d: footprint %+v from %q, COW %+v from %q; want %+v %q %+v %q", s.Seq,
					s.Footprint, s.FootprintFrom, s.COW, s.COWFrom, want.Footprint, want.FootprintFrom, want.COW, want.COWFrom)
			}
		}
		perNode[ev.Node]++
		if ev.Kind == source.EventSaveEnded {
			recorded = append(recorded, *ev.Report)
		}
	}
	if len(perNode) != 2 || len(recorded) != 2 {
		t.Fatalf("events per node %v, %d reports", perNode, len(recorded))
	}
	derived := Reports(rec)
	if len(derived) != len(recorded) {
		t.Fatalf("derived %d reports, recorded %d", len(derived), len(recorded))
	}
	for _, want := range recorded {
		found := false
		for _, got := range derived {
			if got.Addr != want.Addr || got.Ended != want.Ended {
				continue
			}
			found = true
			if got.Node != source.NodeID(want.Addr) || got.Kind != want.Kind || got.Status != want.Status ||
				got.COW != want.COW || got.ServerSeconds != want.ServerSeconds || got.Started != want.Started ||
				got.PeakLiveCOW != want.PeakLiveCOW || got.OpsBefore != want.OpsBefore {
				t.Errorf("derived report differs:\nrecorded %+v\nderived  %+v", want, got)
			}
		}
		if !found {
			t.Errorf("no derived report for %s ending at %v", want.Addr, want.Ended)
		}
	}
}

// TestArrayUpToLastElement: a fixed-size array is written up to its last
// non-zero element and reads back whole; more elements than it holds is
// an error, not a silent cut.
func TestArrayUpToLastElement(t *testing.T) {
	epoch := time.Now().Round(0)
	s := &source.Sample{Offset: 1, At: epoch.Add(1)}
	s.Info.NumReplicas = 2
	s.Info.Replicas[1] = source.Replica{IP: "10.0.0.7", Port: source.Some[int64](6380), State: "wait_bgsave"}
	data := writeAll(t, "", testHeader(epoch), []source.Event{{Kind: source.EventSample, Offset: 1, Sample: s}})
	line := strings.Split(string(data), "\n")[1]
	want := `"replicas":[{"ip":"","port":null,"state":""},{"ip":"10.0.0.7","port":6380,"state":"wait_bgsave"}]`
	if !strings.Contains(line, want) {
		t.Fatalf("sample line lacks %s: %s", want, line)
	}
	rec, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Events[0].Sample.Info; got.Replicas != s.Info.Replicas || got.NumReplicas != 2 {
		t.Fatalf("replicas read back %+v", got.Replicas)
	}
	// (A bad last line reads as a recording cut short: add a good one.)
	tooMany := strings.Replace(string(data), `"replicas":[`, `"replicas":[{},{},{},{},{},{},{},{},`, 1) + line + "\n"
	if _, err := Read(strings.NewReader(tooMany)); err == nil || !strings.Contains(err.Error(), "10 elements for an array of 8") {
		t.Fatalf("an array too long: %v", err)
	}
}

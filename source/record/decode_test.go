package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// readDecompressed calls read with the content of the recording at path,
// decompressed.
func readDecompressed(t testing.TB, path string, read func(io.Reader)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := decompress(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.done()
	read(d.r)
}

// recordedLines are the raw lines of a recording in testdata, its header
// first.
func recordedLines(t testing.TB, path string) [][]byte {
	t.Helper()
	var lines [][]byte
	readDecompressed(t, path, func(r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
		if err := sc.Err(); err != nil || len(lines) < 10 {
			t.Fatalf("%s: %d lines, %v", path, len(lines), err)
		}
	})
	return lines
}

// mutations are a line made odd in the ways a hand-edited or hostile
// file may be: the walk must read each as the map-based reading does.
func mutations(line []byte) [][]byte {
	var out [][]byte
	var indented bytes.Buffer
	if json.Indent(&indented, line, "", "  ") == nil {
		out = append(out, indented.Bytes())
	}
	for _, r := range [][2]string{
		{`"used_memory":`, `"used_memory":1,"used_memory":`},   // a repeated key: the last wins
		{`"info":{`, `"info":{"rss":1},"info":{`},              // a repeated object
		{`"used_memory"`, `"used\u005fmemory"`},                // an escaped key
		{`"used_memory":`, `"used_memory":"x","a":`},           // a wrong type
		{`"used_memory":`, `"used_memory":1e3,"a":`},           // an exponent
		{`"rss":`, `"rss":null,"b":`},                          // null
		{`"info":`, `"info":[1],"c":`},                         // not an object
		{`"info":`, `"info":null,"c":`},                        // null object
		{`"replicas":[`, `"replicas":[{"ip":"\u00e9\u202e"},`}, // escapes
		{`{"t":`, `{"zz":{"a":[1,"}",{"b":"\"]"}]},"t":`},      // an unknown key
		{`"t":`, `"t":"1","u":`},                               // t not a number
		{`"t":`, `"t":-0.5e1,"u":`},
		{`"kind":"sample"`, `"kind":"samp\u006ce"`},
		{`"node":"`, "\"node\":\"\xff"}, // not UTF-8
		{`"delta":{`, `"delta":{"seq":3,`},
		{`"delta":{`, `"delta":{"cow":5,`},
		{`"delta":`, `"delta":null,"d":`},
	} {
		if bytes.Contains(line, []byte(r[0])) {
			out = append(out, bytes.Replace(line, []byte(r[0]), []byte(r[1]), 1))
		}
	}
	for _, n := range []int{1, len(line) / 3, len(line) - 2} {
		if n > 0 && n < len(line) {
			out = append(out, line[:n])
		}
	}
	return append(out, []byte(`[1]`), []byte(`null`), []byte(`{}`), []byte(`{"kind":"sample","node":"n","t":1} x`))
}

// decodeBoth decodes line by the walk and by the map-based reading, each
// onto its own copy of bases.
func decodeBoth(line []byte, h *Header, bases map[source.NodeID]*source.Sample) (walked, mapped source.Event, werr, merr error) {
	b1, b2 := map[source.NodeID]*source.Sample{}, map[source.NodeID]*source.Sample{}
	for k, v := range bases {
		b1[k], b2[k] = v, v
	}
	walked, werr = decodeEvent(line, h, b1)
	walkDecode = false
	defer func() { walkDecode = true }()
	mapped, merr = decodeEvent(line, h, b2)
	return
}

// FuzzDecodeWalk: the walk over an event line's bytes reads every line of
// the real recordings in testdata, and every mutation of them, into the
// very event (or the very error) the map-based reading does. Its seeds run
// in every go test; go test -fuzz FuzzDecodeWalk looks further.
func FuzzDecodeWalk(f *testing.F) {
	for _, path := range []string{"testdata/busy-two-servers.jsonl.zst", "testdata/v1-two-servers.jsonl", "testdata/v2-two-servers.jsonl"} {
		lines := recordedLines(f, path)
		for _, line := range lines[1:] {
			f.Add(line)
			for _, m := range mutations(line) {
				f.Add(m)
			}
		}
	}
	// The busy recording's header and a base for each node, for the deltas.
	lines := recordedLines(f, "testdata/busy-two-servers.jsonl.zst")
	h, err := parseHeader(lines[0], false)
	if err != nil {
		f.Fatal(err)
	}
	h.Version = Version // deltas as format 5 reads them
	bases := map[source.NodeID]*source.Sample{}
	for _, line := range lines[1:] {
		if ev, err := decodeEvent(line, &h, bases); err == nil && ev.Kind == source.EventSample && ev.Sample != nil {
			bases[ev.Node] = ev.Sample
		}
	}
	if len(bases) != 2 {
		f.Fatalf("bases for %d nodes", len(bases))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		w, m, werr, merr := decodeBoth(line, &h, bases)
		if (werr == nil) != (merr == nil) || werr != nil && werr.Error() != merr.Error() {
			t.Fatalf("line %q: the walk says %v, the map %v", line, werr, merr)
		}
		if !reflect.DeepEqual(w, m) {
			t.Fatalf("line %q: the walk reads\n%+v\nthe map\n%+v", line, w, m)
		}
	})
}

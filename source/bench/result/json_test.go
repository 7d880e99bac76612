package result

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// TestReadJSONRoundTrip: what WriteJSON writes, ReadJSON reads back, the
// statistics and each run's figures whole, a null as absent.
func TestReadJSONRoundTrip(t *testing.T) {
	runs := []Run{
		{Report: source.SaveReport{Kind: source.SaveFork, Status: "ok", COW: source.Some[int64](20 << 20), Observed: 1500 * time.Millisecond,
			ServerSeconds: source.Some[int64](1), StartedAt: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
			WriterOps: 4000, WorstPing: 70 * time.Millisecond, P99Ping: 40 * time.Millisecond, ServerCOW: source.Some[int64](20 << 20), ServerSeconds: source.Some[int64](1),
			DatasetKeys: 50000, UsedMemory: 20 << 20, MemDelta: source.Some[int64](21 << 20)},
		{Report: source.SaveReport{Kind: source.SaveFork, Status: "ok", Observed: 2 * time.Second},
			WriterOps: 3000, WorstPing: 90 * time.Millisecond, P99Ping: 45 * time.Millisecond, ServerCOW: source.Some[int64](19 << 20), DatasetKeys: 50000},
	}
	in := []Summary{{Server: 0, Addr: "127.0.0.1:7001", Runs: runs}}
	in[0].Summarise()
	out := roundTrip(t, in)
	if len(out) != 1 || len(out[0].Runs) != 2 {
		t.Fatalf("read %+v", out)
	}
	g, w := out[0], in[0]
	if g.COW != w.COW || g.MemDelta != w.MemDelta || g.SaveTime != w.SaveTime || g.WriterOps != w.WriterOps ||
		g.WorstPing != w.WorstPing || g.P99Ping != w.P99Ping || g.Kind != w.Kind || g.Addr != w.Addr {
		t.Errorf("summary read back\n %+v\nwant\n %+v", g, w)
	}
	if r := g.Runs[1]; r.Report.COW.OK || r.MemDelta.OK || r.ServerCOW != source.Some[int64](19<<20) || r.Report.Observed != 2*time.Second {
		t.Errorf("run 2 read back %+v", r)
	}
	if r := g.Runs[0]; r.Report.COW != runs[0].Report.COW || r.WorstPing != runs[0].WorstPing || !r.Report.StartedAt.Equal(runs[0].Report.StartedAt) {
		t.Errorf("run 1 read back %+v", r)
	}
}

// TestReadJSONRejects: what is not bench output says so; output cut short
// says that.
func TestReadJSONRejects(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "empty input"},
		{"hello", "not vkwatch bench --json output"},
		{`{"format":"x"}`, `no "servers" list`},
		{`{"servers":[{"server":0,"addr":"a"`, "cut short"},
	} {
		_, err := ReadJSON(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadJSON(%q) = %v, want an error saying %q", tt.in, err, tt.want)
		}
		if tt.want != "cut short" && !errors.Is(err, ErrNotBenchJSON) {
			t.Errorf("ReadJSON(%q) = %v, want ErrNotBenchJSON", tt.in, err)
		}
	}
}

// TestReadJSONMethods: a bench of one server saved both ways reads back
// whole: each column's method, each run's number, the method asked and
// the memory limits its verdict rests on.
func TestReadJSONMethods(t *testing.T) {
	in := seedMethods(2)
	out := roundTrip(t, in)
	for i := range in {
		if out[i].Method != in[i].Method {
			t.Errorf("column %d: method %q, want %q", i, out[i].Method, in[i].Method)
		}
		for j, w := range in[i].Runs {
			g := out[i].Runs[j]
			if g.N != w.N || g.Asked != w.Asked || !slices.Equal(g.Limits, w.Limits) {
				t.Errorf("column %d run %d: %d %q %+v, want %d %q %+v", i, j, g.N, g.Asked, g.Limits, w.N, w.Asked, w.Limits)
			}
		}
	}
}

// roundTrip is what ReadJSON reads of what WriteJSON wrote of in.
func roundTrip(t *testing.T, in []Summary) []Summary {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

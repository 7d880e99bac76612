package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// TestLoadRealSave records a real server through a real BGSAVE into a
// zstd recording, as --record run.jsonl.zst does, and loads it: one save,
// whose copy-on-write is the server's rdb_last_cow_size and whose duration
// is the report the watcher emitted live; the series hold every sample,
// the footprint read from /proc, and the save's cost curve.
func TestLoadRealSave(t *testing.T) {
	pr, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	// (A test server never saves by itself: server.Start gives it --save "".)
	s := watchtest.SlowSave(t, 20000, 300, 50, 60*time.Second, watch.Config{Interval: 100 * time.Millisecond, Proc: pr.Read})
	w := s.Watcher
	path := filepath.Join(t.TempDir(), "run.jsonl.zst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := record.NewWriter(f, record.Header{
		VKWatch: "test", Epoch: s.Clock.Epoch(), Settings: map[string]string{"interval": "100ms"},
		Servers: []record.ServerInfo{{Node: w.Node(), Addr: w.Endpoint().String(), Identity: &s.Identity}},
	}, record.Options{Compression: record.Zstd})
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	live := watchtest.RunBGSAVE(t, s.Ctx, w, 60*time.Second, func(ev source.Event) {
		if err := rw.Write(ev); err != nil {
			t.Errorf("write: %v", err)
		}
		if ev.Kind == source.EventSample {
			samples++
		}
	})
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	info := s.Admin.Info(s.Ctx, "persistence").Val()
	serverCOW := servertest.InfoField(t, info, "rdb_last_cow_size")

	in, err := Load(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if in.Recording == nil || len(in.Recording.Servers) != 1 {
		t.Fatalf("loaded %+v, want a recording of one server", in)
	}
	srv := in.Recording.Servers[0]
	if len(srv.Saves) != 1 {
		t.Fatalf("%d saves, want the one BGSAVE", len(srv.Saves))
	}
	sv := srv.Saves[0]
	if v, ok := sv.COW.Get(); !ok || v != serverCOW {
		t.Errorf("save's copy-on-write %v, the server's rdb_last_cow_size %d", sv.COW, serverCOW)
	}
	if sv.Observed != live.Observed || sv.Started != live.Started || sv.Kind != source.SaveFork {
		t.Errorf("save %s from %v for %v; live it was %s from %v for %v", sv.Kind, sv.Started, sv.Observed, live.Kind, live.Started, live.Observed)
	}
	if len(srv.T) != samples || len(srv.Footprint) != samples || len(srv.PingMax) != samples {
		t.Errorf("series of %d/%d/%d points, %d samples recorded", len(srv.T), len(srv.Footprint), len(srv.PingMax), samples)
	}
	if srv.FootprintFrom != source.FromProc {
		t.Errorf("footprint from %q, want proc for a local server", srv.FootprintFrom)
	}
	if sv.Method != "" {
		t.Errorf("method %q: redis 7 has no bgsave-default-method, want none (n/a)", sv.Method)
	}
	cc := sv.CostCurve(100)
	if !cc.HaveCOW || cc.PeakCOW.Y != float64(sv.PeakCOW.V) || len(cc.COW) == 0 {
		t.Errorf("cost curve %+v of save with peak %v", cc, sv.PeakCOW)
	}
	if _, hi, ok := Extent(srv.Footprint); !ok || math.IsNaN(hi) || hi <= 0 {
		t.Errorf("no footprint in the series")
	}

	// The same save as --report writes it reads back as a recording of
	// saves alone: the live report whole, at its own time of day.
	b, err := record.MarshalReports([]source.SaveReport{live})
	if err != nil {
		t.Fatal(err)
	}
	reps := filepath.Join(t.TempDir(), "saves.json")
	if err := os.WriteFile(reps, b, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err = Load(reps, false)
	if err != nil {
		t.Fatal(err)
	}
	if in.Recording == nil || !in.Recording.SavesOnly || len(in.Recording.Servers) != 1 || len(in.Recording.Servers[0].Saves) != 1 {
		t.Fatalf("--report's file loaded as %+v, want the saves of one server", in)
	}
	got := in.Recording.Servers[0].Saves[0]
	if got.Started != live.Started || got.Observed != live.Observed || got.COW != live.COW || len(got.Curve) != len(live.Curve) || len(got.Curve) == 0 {
		t.Errorf("read back: from %v for %v, cow %v, %d curve points; live: from %v for %v, cow %v, %d points",
			got.Started, got.Observed, got.COW, len(got.Curve), live.Started, live.Observed, live.COW, len(live.Curve))
	}
	if at := in.Recording.Epoch.Add(got.Started); !at.Equal(live.StartedAt) || in.Recording.Servers[0].Addr != w.Endpoint().String() {
		t.Errorf("save placed at %v on %s; it began at %v on %s", at, in.Recording.Servers[0].Addr, live.StartedAt, w.Endpoint())
	}
}

// TestHeaderServersWithoutNode: a recording whose header names its servers
// by address alone (bench's, until its header carried their node ids) has
// each server once, as its events name it.
func TestHeaderServersWithoutNode(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "record", "testdata", "two-saves.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(data), "\n")
	head = strings.ReplaceAll(head, `"node":"127.0.0.1:1700`, `"node":"","was":"`)
	p := filepath.Join(t.TempDir(), "bench.jsonl")
	if err := os.WriteFile(p, []byte(head+"\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Load(p, false)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, s := range in.Recording.Servers {
		addrs = append(addrs, s.Addr)
		if len(s.T) == 0 {
			t.Errorf("server %s has no samples", s.Addr)
		}
	}
	if strings.Join(addrs, " ") != "127.0.0.1:17001 127.0.0.1:17002" {
		t.Errorf("servers %v, want 127.0.0.1:17001 and 127.0.0.1:17002, each once", addrs)
	}
}

// TestLoadBadInput: each kind of bad input is an error that names the
// file and says what is wrong, and a recording cut short is one unless
// asked for.
func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "record", "testdata", "two-saves.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut := good[:len(good)-40]
	for _, tt := range []struct {
		name, data, says string
	}{
		{"empty", "", "empty file"},
		{"text", "hello\n", "neither a vkwatch recording (--record), save reports (--report) nor bench --json output"},
		{"json", `{"a": 1}`, "neither a vkwatch recording (--record), save reports (--report) nor bench --json output"},
		{"cut", string(cut), "recording cut short"},
		{"bench cut", `{"servers": [`, "bench output cut short"},
		{"reports cut", `[{"node": "a:1", "kind": "BGSAVE fork", "started_at": "2026-12-01T08:35:21Z"},`, "--report output cut short"},
		{"array of numbers", `[1, 2]`, "not --report output"},
		{"report without a server", `[{"kind": "BGSAVE fork", "started_at": "2026-12-01T08:35:21Z"}]`, "not --report output: report 1 names no server"},
		{"report without a time", `[{"addr": "a:1", "kind": "BGSAVE fork"}]`, "not --report output: report 1 has no started_at"},
	} {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, false)
		if err == nil || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming the file and saying %q", tt.name, err, tt.says)
		}
	}
	in, err := Load(filepath.Join(dir, "cut"), true)
	if err != nil || in.Recording == nil || len(in.Recording.Servers) != 2 {
		t.Errorf("a cut recording with allowTruncated: %v, %+v", err, in.Recording)
	}
}

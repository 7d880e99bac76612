package metrics

import (
	"io"
	"net/http/httptest"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vkwatch/vkwatch/source"
)

// These tests feed the exporter events as a watcher sends them (the stack
// test feeds it a real server's) to pin down the exposition's shape.

// gather collects e through a pedantic registry (which checks every
// metric against its description) as "name{labels}" -> value.
func gather(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

const addr = "10.0.0.7:6379"

func connected(e *Exporter) {
	e.Observe(source.Event{Node: addr, Kind: source.EventConnected, Identity: &source.Identity{Addr: addr}})
}

func idle(e *Exporter, off time.Duration) {
	e.Observe(source.Event{Node: addr, Kind: source.EventSample, Sample: &source.Sample{
		Offset: off, Info: source.Info{UsedMemory: source.Some[int64](1 << 30), RSS: source.Some[int64](1 << 30)},
		Footprint: source.Some[int64](1 << 30), FootprintFrom: source.FromInfo, COW: source.Some[int64](0), COWFrom: source.FromInfo}})
}

func ended(e *Exporter, kind source.SaveKind, status string, cow source.Opt[int64]) {
	e.Observe(source.Event{Node: addr, Kind: source.EventSaveEnded, Report: &source.SaveReport{
		Node: addr, Kind: kind, Status: status, COW: cow, Observed: 3 * time.Second}})
}

// Saves ending ok, then err, then lost to a restart change values, never
// the set of series: a status is an enum of series, and the counters of
// every outcome are there, at 0, before the first save.
func TestSeriesKeepTheirLabelsWhateverTheStatus(t *testing.T) {
	e := New("")
	connected(e)
	idle(e, time.Second)
	before := gather(t, e)
	for _, status := range statuses {
		if v, ok := before[`vkwatch_saves_total{addr=`+addr+`,kind=bgsave,method=fork,status=`+status+`}`]; !ok || v != 0 {
			t.Errorf("before any save, vkwatch_saves_total{bgsave,fork,%s} is %v (present %v), want a 0", status, v, ok)
		}
	}
	ended(e, source.SaveFork, source.StatusOK, source.Some[int64](4096))
	first := gather(t, e)
	for _, st := range []string{source.StatusErr, source.StatusLost, "something a server made up"} {
		ended(e, source.SaveFork, st, source.Opt[int64]{})
		next := gather(t, e)
		var gone, come []string
		for k := range first {
			if _, ok := next[k]; !ok && !strings.HasPrefix(k, "vkwatch_last_save_cow_bytes") {
				gone = append(gone, k)
			}
		}
		for k := range next {
			if _, ok := first[k]; !ok {
				come = append(come, k)
			}
		}
		if len(gone)+len(come) > 0 {
			t.Errorf("a save ending %q: series gone %v, come %v", st, gone, come)
		}
		want := map[string]string{source.StatusErr: "err", source.StatusLost: "lost"}[st]
		if want == "" {
			want = "unknown"
		}
		if v := next[`vkwatch_last_save_status{addr=`+addr+`,kind=bgsave,method=fork,status=`+want+`}`]; v != 1 {
			t.Errorf("a save ending %q: vkwatch_last_save_status{status=%s} %v", st, want, v)
		}
	}
}

// A forkless save's figures are its own series: they never show the last
// fork save's copy-on-write, which the server keeps in rdb_last_cow_size.
func TestForklessSaveShowsItsOwnFigures(t *testing.T) {
	e := New("")
	connected(e)
	e.Observe(source.Event{Node: addr, Kind: source.EventSample, Sample: &source.Sample{
		Config: source.SaveConfig{Method: "forkless", ForklessInfra: source.Some(true)}}})
	got := gather(t, e)
	if v, ok := got[`vkwatch_saves_total{addr=`+addr+`,kind=bgsave,method=forkless,status=err}`]; !ok || v != 0 {
		t.Errorf("a server that saves forkless has no forkless counters at 0: %v", keys(got))
	}
	ended(e, source.SaveFork, source.StatusOK, source.Some[int64](300<<20))
	// A forkless save's report says none, by construction (as the
	// tracker makes it: 0 from no child), and the exporter says 0.
	ended(e, source.SaveForkless, source.StatusOK, source.Some[int64](0))
	got = gather(t, e)
	if v := got[`vkwatch_last_save_cow_bytes{addr=`+addr+`,kind=bgsave,method=fork}`]; v != 300<<20 {
		t.Errorf("the fork save's copy-on-write %v", v)
	}
	if v, ok := got[`vkwatch_last_save_cow_bytes{addr=`+addr+`,kind=bgsave,method=forkless}`]; !ok || v != 0 {
		t.Errorf("the forkless save's copy-on-write: %v (present %v), want 0 (no child)", v, ok)
	}
	if got[`vkwatch_last_save_duration_seconds{addr=`+addr+`,kind=bgsave,method=forkless}`] != 3 {
		t.Errorf("the forkless save's own duration is missing: %v", keys(got))
	}
}

// Two nodes at one address (a cluster node replaced, the old one not yet
// forgotten) are served once, the connected one: addr alone names a
// series.
func TestOneServerPerAddress(t *testing.T) {
	e := New("")
	e.Observe(source.Event{Node: "aaaa", Kind: source.EventConnected, Identity: &source.Identity{Addr: addr}})
	e.Observe(source.Event{Node: "aaaa", Kind: source.EventDisconnected})
	e.Observe(source.Event{Node: "bbbb", Kind: source.EventConnected, Identity: &source.Identity{Addr: addr}})
	got := gather(t, e)
	if v, ok := got[`vkwatch_node_up{addr=`+addr+`}`]; !ok || v != 1 {
		t.Errorf("vkwatch_node_up %v (present %v): want the connected node's 1", v, ok)
	}
}

// vkwatch_build_info names the version vkwatch was given and the Go that
// built it.
func TestBuildInfo(t *testing.T) {
	got := gather(t, New("v9.9.9"))
	k := `vkwatch_build_info{goversion=` + runtime.Version() + `,revision=`
	found := false
	for name, v := range got {
		if strings.HasPrefix(name, k) && strings.HasSuffix(name, ",version=v9.9.9}") && v == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s...,version=v9.9.9} 1 in %v", k, keys(got))
	}
}

// A save running and a save finished: the text exposition passes
// promtool check metrics.
func TestExpositionPassesPromtool(t *testing.T) {
	e := New("")
	connected(e)
	idle(e, time.Second)
	ended(e, source.SaveFork, source.StatusOK, source.Some[int64](4096))
	e.Observe(source.Event{Node: addr, Kind: source.EventSaveStarted, Sample: &source.Sample{Offset: 2 * time.Second,
		Save: &source.SaveProgress{Kind: source.SaveAOF, Trigger: source.Trigger{Kind: source.TriggerSlotMigration},
			Processed: source.Some[int64](10), Total: source.Some[int64](100), ETA: source.Some(time.Second)}}})
	e.PingHistogram(addr)
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{"vkwatch_save_stalled_seconds{", `trigger="slotmigration"`, "vkwatch_ping_duration_seconds_bucket{"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the exposition has no %s:\n%s", want, body)
		}
	}
	if out, err := promtool(t, t.TempDir(), body, "check", "metrics"); err != nil || out != "" {
		t.Errorf("promtool check metrics: %v\n%s\nof:\n%s", err, out, body)
	}
}

// A server that goes silent during a save (a stall: connected, INFO
// unanswered) is down to vkwatch_node_up but keeps its save's series; one
// whose connection is lost does not.
func TestAStallKeepsTheSave(t *testing.T) {
	e := New("")
	connected(e)
	e.Observe(source.Event{Node: addr, Kind: source.EventSaveStarted, Sample: &source.Sample{Offset: time.Second,
		Save: &source.SaveProgress{Kind: source.SaveFork, Processed: source.Some[int64](10), Total: source.Some[int64](100)}}})
	progress := `vkwatch_save_progress_ratio{addr=` + addr + `,kind=bgsave,method=fork,trigger=unknown}`
	e.Observe(source.Event{Node: addr, Kind: source.EventDisconnected, Stalled: true, Err: "not answering for 2s"})
	got := gather(t, e)
	if got[`vkwatch_node_up{addr=`+addr+`}`] != 0 || got[progress] != 0.1 || got[`vkwatch_save_in_progress{addr=`+addr+`}`] != 1 {
		t.Errorf("stalled: up %v, progress %v, saving %v; want 0, 0.1, 1", got[`vkwatch_node_up{addr=`+addr+`}`], got[progress], got[`vkwatch_save_in_progress{addr=`+addr+`}`])
	}
	e.Observe(source.Event{Node: addr, Kind: source.EventDisconnected, Err: "connection refused"})
	got = gather(t, e)
	if _, ok := got[progress]; ok || got[`vkwatch_save_in_progress{addr=`+addr+`}`] != 0 {
		t.Errorf("disconnected: the save's progress %v still served, saving %v", got[progress], got[`vkwatch_save_in_progress{addr=`+addr+`}`])
	}
}

// Every cause's counter is there at 0 before the first spike, and a spike
// counts once under each of its causes.
func TestSpikesByCause(t *testing.T) {
	e := New("")
	connected(e)
	idle(e, time.Second)
	before := gather(t, e)
	for _, c := range source.CauseKinds() {
		if v, ok := before[`vkwatch_ping_spikes_total{addr=`+addr+`,cause=`+string(c)+`}`]; !ok || v != 0 {
			t.Errorf("before any spike, cause %s: %v (present %v)", c, v, ok)
		}
	}
	sp := &source.Spike{Ping: 70 * time.Millisecond, Causes: []source.SpikeCause{{Kind: source.CauseFork}, {Kind: source.CauseFaults}}}
	e.Observe(source.Event{Node: addr, Kind: source.EventSpike, Spike: sp})
	e.Observe(source.Event{Node: addr, Kind: source.EventSpike, Spike: &source.Spike{Causes: []source.SpikeCause{{Kind: source.CauseFork}}}})
	after := gather(t, e)
	for c, want := range map[string]float64{"fork": 2, "page_faults": 1, "not_seen": 0} {
		if v := after[`vkwatch_ping_spikes_total{addr=`+addr+`,cause=`+c+`}`]; v != want {
			t.Errorf("cause %s: %v, want %v", c, v, want)
		}
	}
	if len(after) != len(before) {
		t.Errorf("series came or went: %d then %d", len(before), len(after))
	}
}

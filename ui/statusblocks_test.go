package ui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/status"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The pane's status blocks (fields.go) on real saves: a fork save of two
// real servers, one idle and one written to, and a forkless save of the
// Valkey 9.2 stand-in beside a fork save of another (no 9.2 server can
// be built here), each watched from before it to after it. The live
// tests (statusblocks_realserver_test.go) run them and check every
// frame; with -update they also record their events in testdata/status,
// from which TestStatusBlocksGolden draws the same frames again, checks
// them the same way and pins them as golden files.

// footAt is when a footer entry a key made happened, as the footer says
// it: fixedNow's time.
const footAt = "15:05:35 "

// fieldRe matches a status-block field: its label, the padding that
// aligns its column, its value, then the end of the value (a space, a
// border or the line's end).
func fieldRe(label, value string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s│║|])` + regexp.QuoteMeta(label) + ` +` + regexp.QuoteMeta(value) + `(\s|[│║|]|$)`)
}

// hasField reports whether the frame v shows the field label with value.
func hasField(v, label, value string) bool { return fieldRe(label, value).MatchString(v) }

// wantFields fails the test for each field of want (label, value, label,
// value...) the frame v does not show.
func wantFields(t *testing.T, what, v string, want ...string) {
	t.Helper()
	for i := 0; i+1 < len(want); i += 2 {
		if !hasField(v, want[i], want[i+1]) {
			t.Errorf("%s: no field %q %q:\n%s", what, want[i], want[i+1], v)
		}
	}
}

// statusRun is a save watched from before it to its end: the servers and
// their events, in order. shown is the server a single pane shows.
type statusRun struct {
	name   string
	nodes  []Node
	events []source.Event
	shown  int
}

// statusViews are the sizes the frames are drawn at: two panes at
// 200x50 (100 columns each), one at 80x24 and at 120x40. all says every
// field the server or an instrument measured must be in the frame.
var statusViews = []struct {
	name string
	w, h int
	both bool // both servers, else the run's shown one
	all  bool
}{
	{"two_panes_200x50", 200, 50, true, true},
	{"one_pane_80x24", 80, 24, false, false},
	{"one_pane_120x40", 120, 40, false, true},
}

// moments are the frames of a run: how many of its events are folded
// before each. Before: up to the first sample that sees a save. During:
// up to the first sample of the shown server's save a quarter done, with
// an ETA. After: up to the first sample of every server after its save
// ended.
func (r *statusRun) moments(t *testing.T) [][2]any {
	t.Helper()
	before, during, after := -1, -1, -1
	ended := map[source.NodeID]bool{}
	settled := map[source.NodeID]bool{}
	shown := r.nodes[r.shown].ID
	for i, ev := range r.events {
		s := ev.Sample
		switch {
		case ev.Kind == source.EventSaveEnded:
			ended[ev.Node] = true
		case ev.Kind != source.EventSample || s == nil:
		case s.Save != nil && before < 0:
			before = i
		case s.Save != nil && ev.Node == shown && during < 0:
			if f, ok := s.Save.Fraction().Get(); ok && f >= 0.25 && s.Save.ETA.OK {
				during = i + 1
			}
		case s.Save == nil && ended[ev.Node]:
			settled[ev.Node] = true
			if len(settled) == len(r.nodes) && after < 0 {
				after = i + 1
			}
		}
	}
	if before < 0 || during < 0 || after < 0 {
		t.Fatalf("%s: the run lacks a moment: before %d, during %d, after %d (%d events)", r.name, before, during, after, len(r.events))
	}
	return [][2]any{{"before", before}, {"during", during}, {"after", after}}
}

// frames draws the run's frames at every size and moment, checks each
// (checkStatus) and hands it to got, named size_moment.
func (r *statusRun) frames(t *testing.T, got func(name string, m Model)) {
	t.Helper()
	for _, mo := range r.moments(t) {
		for _, sv := range statusViews {
			nodes := r.nodes
			if !sv.both {
				nodes = r.nodes[r.shown : r.shown+1]
			}
			name := sv.name + "_" + mo[0].(string)
			m := setup(t, Config{Nodes: nodes}, sv.w, sv.h, r.events[:mo[1].(int)])
			checkStatus(t, r.name+" "+name, m, sv.all)
			if mo[0] == "after" && strings.Contains(plainView(m), "Background saving started") {
				t.Errorf("%s %s: the save's start still in the footer after it ended:\n%s", r.name, name, plainView(m))
			}
			got(name, m)
		}
	}
}

// blockLines are node id's status rows as its pane drew them: the state
// line and the two blocks, without the border.
func blockLines(m Model, id source.NodeID) []string {
	var out []string
	for _, l := range m.panes.StatusRows(id) {
		r := []rune(ansi.Strip(l))
		out = append(out, strings.TrimRight(string(r[2:len(r)-2]), " "))
	}
	return out
}

// checkStatus checks the status rows of every pane of m: none ends in
// "…"; a fork save shows no blocked clients; the keys processed / total
// are there while a save runs; where all, every figure measured is there
// (wantMeasured), and everywhere the fields shown are the most important
// ones (the written priority: none missing while a less important one
// shows).
func checkStatus(t *testing.T, what string, m Model, all bool) {
	t.Helper()
	for _, id := range m.panes.Shown() {
		addr, _ := m.panes.Addr(id)
		lines := blockLines(m, id)
		text := strings.Join(lines, "\n")
		for _, l := range lines {
			if strings.HasSuffix(l, "…") {
				t.Errorf("%s: a status line of %s cut with …: %q\n%s", what, addr, l, text)
			}
		}
		v := m.store.View(id)
		if s := v.Latest; s != nil && s.Save != nil {
			if !hasField(text, "keys", status.KeysText(s.Save)) {
				t.Errorf("%s: the keys processed / total of %s's save not shown:\n%s", what, addr, text)
			}
			if s.Save.Kind.Method() == "fork" && strings.Contains(text, "blocked clients 0") {
				t.Errorf("%s: a fork save shows blocked clients 0:\n%s", what, text)
			}
		}
		if all {
			for _, f := range wantMeasured(v) {
				if !hasField(text, f[0], f[1]) {
					t.Errorf("%s: %s's %q (%s) not shown:\n%s", what, addr, f[0], f[1], text)
				}
			}
		}
		checkPriority(t, what, text, v)
	}
}

// checkPriority: in each block drawn, no field is left out while a less
// important one shows (fields.go's written priority).
func checkPriority(t *testing.T, what, text string, v store.View) {
	t.Helper()
	st := &style.Styles{}
	b := status.Next(st, v)
	if s := v.Latest; s != nil && s.Save != nil {
		b = status.Save(st, progressForTest(), v)
	}
	for _, blk := range []status.Block{b, status.Report(st, v.Report)} {
		fs := status.ByPrio(blk.Fields)
		missing := ""
		for _, f := range fs {
			shown := hasField(text, f.Label, f.Value) || f.Short != "" && hasField(text, f.Label, f.Short)
			switch {
			case !shown && missing == "":
				missing = f.Label
			case shown && missing != "" && prioOf(fs, missing) < f.Prio:
				t.Errorf("%s: %q left out while the less important %q shows:\n%s", what, missing, f.Label, text)
			}
		}
	}
}

// progressForTest is a progress bar as the model draws it.
func progressForTest() progress.Model {
	return progress.New(progress.WithDefaultGradient(), progress.WithoutPercentage())
}

// prioOf is the priority of the field labelled label in fs.
func prioOf(fs []status.Field, label string) status.Prio {
	for _, f := range fs {
		if f.Label == label {
			return f.Prio
		}
	}
	return status.PrioMore
}

// wantMeasured are the fields a pane must show for view v (label,
// value): every figure of the running save, or of the next save's
// forecast, and of the last save's report that the server or an
// instrument gave. It is written from the figures, not from the blocks:
// a figure a block forgets is missed here.
func wantMeasured(v store.View) [][2]string {
	var out [][2]string
	add := func(label, value string) { out = append(out, [2]string{label, value}) }
	if s := v.Latest; s != nil && s.Save != nil {
		sv := s.Save
		if f, ok := sv.Fraction().Get(); ok {
			add("progress", fmt.Sprintf("%.1f%%", f*100))
		}
		add("keys", status.KeysText(sv))
		if eta, ok := sv.ETA.Get(); ok && sv.Phase == "" {
			add("ETA", text.Elapsed(eta))
		}
		if sv.Phase != "" {
			add("phase", sv.Phase)
		}
		if c, ok := s.COW.Get(); ok && sv.Kind.Method() == "fork" {
			add("cow", text.Bytes(c))
		}
		add("elapsed", text.Elapsed(sv.Elapsed))
		if b, ok := s.Info.BlockedClients.Get(); ok && (b > 0 || sv.Kind.Method() == "forkless") {
			add("blocked clients", fmt.Sprint(b))
		}
	} else if m, ok := v.Methods.Get(); ok && m.Fork.OK {
		// A server that can save both ways: each method's forecast.
		fc := m.Fork.V
		add("fork", "~"+text.Bytes(fc.COW))
		if fp, ok := fc.Footprint.Get(); ok {
			add("footprint", text.Bytes(fp))
		}
		add("worst", text.Bytes(fc.Worst))
		if r, ok := fc.Rate.Get(); ok {
			add("writes", text.Rate(r)+"/s")
		}
		if f, ok := m.Forkless.Get(); ok {
			add("forkless", "no cow · ~"+text.Elapsed(f.Duration))
		} else {
			add("forkless", forecast.NoForklessYet)
		}
	} else if fc, ok := v.Forecast.Get(); ok && fc.Basis != forecast.Forkless {
		add("cow", "~"+text.Bytes(fc.COW))
		add("headroom", strings.Split(ansi.Strip(words.Level(&style.Styles{}, words.Headroom(v, false))), " ")[0])
		if fp, ok := fc.Footprint.Get(); ok {
			add("footprint", text.Bytes(fp))
		}
		add("worst", text.Bytes(fc.Worst))
		if r, ok := fc.Rate.Get(); ok {
			add("writes", text.Rate(r)+"/s")
		}
		add("lasting", text.Elapsed(fc.Duration))
	}
	if r := v.Report; r != nil {
		for _, f := range reportMeasured {
			if label, value, ok := f.want(r); ok {
				add(label, value)
			}
		}
	}
	return out
}

// reportFigure is a save report's figure as the pane must show it, when
// the report has it.
type reportFigure struct {
	fields []string // the SaveReport fields it shows
	want   func(r *source.SaveReport) (label, value string, ok bool)
}

// reportMeasured are the report's figures a pane shows.
var reportMeasured = []reportFigure{
	{[]string{"COW", "COWFrom"}, func(r *source.SaveReport) (string, string, bool) {
		return "cow", words.NoneShort(words.COW(r)), r.COW.OK || r.COWFrom == source.FromNoChild
	}},
	{[]string{"ServerSeconds"}, func(r *source.SaveReport) (string, string, bool) {
		return "took", words.ServerSecs(r.ServerSeconds), r.ServerSeconds.OK
	}},
	{[]string{"Observed", "ObservedUpTo"}, func(r *source.SaveReport) (string, string, bool) { return "observed", words.Observed(r), true }},
	{[]string{"ForkPause"}, func(r *source.SaveReport) (string, string, bool) {
		return "fork pause", words.NoneShort(words.Pause(r)), r.ForkPause.OK || r.Kind.Method() == "forkless"
	}},
	{[]string{"BlockedBefore", "BlockedDuring", "BlockedAfter"}, func(r *source.SaveReport) (string, string, bool) {
		b, ok := r.BlockedWriters().Get()
		return "blocked writers", fmt.Sprint(b), ok && (b > 0 || r.Kind.Method() == "forkless")
	}},
	{[]string{"PingBefore", "PingDuring"}, func(r *source.SaveReport) (string, string, bool) {
		worst := func(l source.Latency) string {
			if l.Count == 0 {
				return text.NA
			}
			return text.Latency(l.Max)
		}
		return "ping max", worst(r.PingBefore) + " → " + worst(r.PingDuring), r.PingBefore.Count+r.PingDuring.Count > 0
	}},
	{[]string{"OpsBefore", "OpsDuring"}, func(r *source.SaveReport) (string, string, bool) {
		return "ops/s", text.OptRate(r.OpsBefore) + " → " + text.OptRate(r.OpsDuring), r.OpsBefore.OK || r.OpsDuring.OK
	}},
	{[]string{"WriterOpsBefore", "WriterOpsDuring"}, func(r *source.SaveReport) (string, string, bool) {
		return "writers/s", text.OptRate(r.WriterOpsBefore) + " → " + text.OptRate(r.WriterOpsDuring), r.WriterOpsBefore.OK || r.WriterOpsDuring.OK
	}},
	{[]string{"ForecastCOW", "ForecastBasis"}, func(r *source.SaveReport) (string, string, bool) {
		return "forecast", text.Bytes(r.ForecastCOW.V), r.ForecastCOW.OK
	}},
	{nil, func(r *source.SaveReport) (string, string, bool) {
		c := words.ForecastCheck(r)
		return "vs actual", c, c != ""
	}},
	{[]string{"PeakCOW", "PeakCOWFrom"}, func(r *source.SaveReport) (string, string, bool) {
		return "cow peak", text.OptBytes(r.PeakCOW), r.PeakCOW.OK && r.COWFrom != source.FromNoChild
	}},
	{[]string{"PeakAtProgress"}, func(r *source.SaveReport) (string, string, bool) {
		at, v := status.PeakAt(r), text.OptBytes(r.PeakCOW)
		if r.PeakCOWFrom != "" {
			v += " " + string(r.PeakCOWFrom)
		}
		return "cow peak", v + at, at != ""
	}},
	{[]string{"PeakFootprintDelta", "PeakFootprintFrom"}, func(r *source.SaveReport) (string, string, bool) {
		return "footprint", text.OptDelta(r.PeakFootprintDelta), r.PeakFootprintDelta.OK
	}},
	{[]string{"PeakUsedDelta"}, func(r *source.SaveReport) (string, string, bool) {
		return "peak used", text.OptDelta(r.PeakUsedDelta), r.PeakUsedDelta.OK
	}},
	{[]string{"PeakRSSDelta"}, func(r *source.SaveReport) (string, string, bool) {
		return "rss", text.OptDelta(r.PeakRSSDelta), r.PeakRSSDelta.OK
	}},
	{[]string{"PeakChildPrivateDirty"}, func(r *source.SaveReport) (string, string, bool) {
		return "child dirty", text.OptBytes(r.PeakChildPrivateDirty), r.PeakChildPrivateDirty.OK
	}},
}

// notInPane are the report's figures the pane leaves to the reports
// table (r) and the report's page, and why.
var notInPane = map[string]string{
	"PeakLiveCOW":      "INFO's current_cow_size peak: the cow peak is the charted instrument's",
	"KeysTotal":        "the keys of the save: its progress showed them while it ran",
	"BaseUsed":         "a baseline, not a cost",
	"BaseRSS":          "a baseline, not a cost",
	"PeakProcRSSDelta": "the footprint is /proc's already where /proc was read",
}

// TestEveryReportFigureHasItsPlace: every figure a save report can carry
// is shown by the pane (reportMeasured) or left to the table with a
// reason (notInPane): a figure added to SaveReport fails this test until
// it is placed.
func TestEveryReportFigureHasItsPlace(t *testing.T) {
	placed := map[string]bool{}
	for _, f := range reportMeasured {
		for _, n := range f.fields {
			placed[n] = true
		}
	}
	for n := range notInPane {
		placed[n] = true
	}
	rt := reflect.TypeOf(source.SaveReport{})
	for i := range rt.NumField() {
		f := rt.Field(i)
		opt := strings.HasPrefix(f.Type.Name(), "Opt[") || f.Type == reflect.TypeOf(source.Latency{})
		if opt && !placed[f.Name] {
			t.Errorf("SaveReport.%s is a figure neither the pane shows nor notInPane leaves out", f.Name)
		}
	}
}

// statusRecordings is where the live tests keep their runs.
const statusRecordings = "testdata/status"

// updating says the golden files are being written (-update).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// keepRun writes r's events to testdata/status/NAME.jsonl.zst when the
// golden files are being written.
func keepRun(t *testing.T, r *statusRun) {
	t.Helper()
	if !updating() {
		return
	}
	if err := os.MkdirAll(statusRecordings, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(statusRecordings, r.name+".jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := record.Header{VKWatch: "test", Epoch: uitest.Epoch}
	for _, n := range r.nodes {
		h.Servers = append(h.Servers, record.ServerInfo{Node: n.ID, Addr: n.Addr})
	}
	w, err := record.NewWriter(f, h, record.Options{Compression: record.Zstd})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range r.events {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStatusBlocksGolden draws the recorded runs' frames, checks them as
// the live tests do and compares them with their golden files.
func TestStatusBlocksGolden(t *testing.T) {
	for _, name := range []string{"fork", "forkless"} {
		t.Run(name, func(t *testing.T) {
			rec, err := record.ReadFile(filepath.Join(statusRecordings, name+".jsonl.zst"))
			if err != nil {
				t.Fatalf("%v (the live test writes it: go test ./ui -run TestStatusBlocksReal -update)", err)
			}
			r := &statusRun{name: name, events: rec.Events, shown: len(rec.Header.Servers) - 1}
			for _, s := range rec.Header.Servers {
				r.nodes = append(r.nodes, Node{ID: s.Node, Addr: s.Addr})
			}
			r.frames(t, func(frame string, m Model) {
				t.Run(frame, func(t *testing.T) { golden.RequireEqual(t, m.View()) })
			})
		})
	}
}

// TestRunningSaveRareFields: a save with an AOF rewrite waiting behind it
// says so in a field; a replica's forkless full sync has no total: its
// keys say so, its ETA is none, and where the bar would be, why not.
func TestRunningSaveRareFields(t *testing.T) {
	evs := uitest.Scenario(1, 28e9) // a fork save running from 20 s
	last := evs[len(evs)-1].Sample
	last.Info.AOFRewriteScheduled = source.Some[int64](1)
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, evs)
	wantFields(t, "AOF rewrite scheduled", plainView(m), "AOF rewrite", "waiting")

	evs = uitest.Scenario(1, 28e9)
	last = evs[len(evs)-1].Sample
	sync := *last.Save
	sync.Kind, sync.Total, sync.ETA = source.SaveForklessSync, source.Opt[int64]{}, source.Opt[time.Duration]{}
	sync.Trigger = source.Trigger{Kind: source.TriggerReplica, Detail: "replica 127.0.0.1:7009"}
	last.Save = &sync
	m = setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, evs)
	v := plainView(m)
	wantFields(t, "forkless sync", v, "keys", "78,000 (a sync: no total)", "ETA", "none (a sync has no total)")
	if hasField(v, "progress", text.NA) || !strings.Contains(v, "a replica's full sync without a fork: keys sent, no total") {
		t.Errorf("a sync's progress:\n%s", v)
	}
}

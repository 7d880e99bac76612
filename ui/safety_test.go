package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
)

func TestForkRisk(t *testing.T) {
	const gib = 1 << 30
	sample := func(used, maxmem, avail, lastCOW source.Opt[int64], method string) *source.Sample {
		return &source.Sample{
			Info:   source.Info{UsedMemory: used, MaxMemory: maxmem, RDBLastCOW: lastCOW},
			Config: source.SaveConfig{Method: method},
			Proc:   source.ProcMem{HostMemAvailable: avail},
		}
	}
	some, none := source.Some[int64], source.Opt[int64]{}
	report := &source.SaveReport{PeakLiveCOW: some(350 * mib)}
	cases := []struct {
		name string
		s    *source.Sample
		last *source.SaveReport
		want string // empty: no warning
	}{
		{"MemAvailable, COW from the report", sample(some(880*mib), none, some(300*mib), some(100*mib), ""), report,
			"127.0.0.1:6379: a fork save may need 350 MiB more (its last COW) but only 300 MiB is available (MemAvailable)"},
		{"MemAvailable counts COW only: used memory is already resident", sample(some(880*mib), none, some(400*mib), some(100*mib), ""), report, ""},
		{"maxmemory, COW from INFO", sample(some(900*mib), some(gib), none, some(200*mib), "fork"), nil,
			"127.0.0.1:6379: a fork save may need 1.07 GiB (used 900 MiB + last COW 200 MiB) but maxmemory is 1.00 GiB"},
		{"rdb_last_cow_size larger than the report's peak", sample(some(900*mib), some(gib), none, some(400*mib), ""), report,
			"127.0.0.1:6379: a fork save may need 1.27 GiB (used 900 MiB + last COW 400 MiB) but maxmemory is 1.00 GiB"},
		{"both exceeded: MemAvailable is named", sample(some(900*mib), some(gib), some(100*mib), some(200*mib), ""), nil,
			"127.0.0.1:6379: a fork save may need 200 MiB more (its last COW) but only 100 MiB is available (MemAvailable)"},
		{"fits under both", sample(some(500*mib), some(gib), some(2*gib), some(200*mib), ""), report, ""},
		{"exactly at maxmemory", sample(some(gib-200*mib), some(gib), none, some(200*mib), ""), nil, ""},
		{"maxmemory 0 means no limit", sample(some(900*mib), some(0), none, some(200*mib), ""), nil, ""},
		{"no COW ever observed", sample(some(900*mib), some(gib), some(mib), some(0), ""), nil, ""},
		{"COW field absent, no report", sample(some(900*mib), some(gib), some(mib), none, ""), nil, ""},
		{"forkless: no fork", sample(some(900*mib), some(gib), some(mib), some(200*mib), "forkless"), report, ""},
		{"used_memory absent", sample(none, some(gib), some(mib), some(200*mib), ""), report, ""},
		{"no sample yet", nil, report, ""},
		{"COW from the report's peak (the fastest instrument)", sample(some(900*mib), some(gib), none, some(100*mib), ""),
			&source.SaveReport{PeakCOW: some(200 * mib), PeakLiveCOW: some(2 * mib)},
			"127.0.0.1:6379: a fork save may need 1.07 GiB (used 900 MiB + last COW 200 MiB) but maxmemory is 1.00 GiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warn := forkRisk("127.0.0.1:6379", tc.s, tc.last, false)
			if got != tc.want || warn != (tc.want != "") {
				t.Errorf("forkRisk = %q, %v\nwant %q", got, warn, tc.want)
			}
		})
	}
}

// TestForkRiskCgroup: a cgroup limit counts the cgroup's usage + the COW
// against the limit, between MemAvailable and maxmemory.
func TestForkRiskCgroup(t *testing.T) {
	some, none := source.Some[int64], source.Opt[int64]{}
	sample := func(usage, limit, avail, maxmem source.Opt[int64]) *source.Sample {
		return &source.Sample{
			Info: source.Info{UsedMemory: some(600 * mib), MaxMemory: maxmem, RDBLastCOW: some(300 * mib)},
			Proc: source.ProcMem{Cgroup: "v2:/system.slice/valkey.service", CgroupUsage: usage, CgroupLimit: limit, HostMemAvailable: avail},
		}
	}
	cases := []struct {
		name string
		s    *source.Sample
		want string
	}{
		{"over the limit", sample(some(800*mib), some(1024*mib), some(8192*mib), none),
			"127.0.0.1:6379: a fork save may need 1.07 GiB (cgroup usage 800 MiB + last COW 300 MiB) but the cgroup's limit is 1.00 GiB (v2:/system.slice/valkey.service)"},
		{"fits under the limit", sample(some(700*mib), some(1024*mib), some(8192*mib), none), ""},
		{"no limit (max)", sample(some(800*mib), none, some(8192*mib), none), ""},
		{"usage unread", sample(none, some(1024*mib), some(8192*mib), none), ""},
		{"MemAvailable is named before the cgroup", sample(some(800*mib), some(1024*mib), some(100*mib), none),
			"127.0.0.1:6379: a fork save may need 300 MiB more (its last COW) but only 100 MiB is available (MemAvailable)"},
		{"the cgroup is named before maxmemory", sample(some(800*mib), some(1024*mib), none, some(800*mib)),
			"127.0.0.1:6379: a fork save may need 1.07 GiB (cgroup usage 800 MiB + last COW 300 MiB) but the cgroup's limit is 1.00 GiB (v2:/system.slice/valkey.service)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warn := forkRisk("127.0.0.1:6379", tc.s, nil, false)
			if got != tc.want || warn != (tc.want != "") {
				t.Errorf("forkRisk = %q, %v\nwant %q", got, warn, tc.want)
			}
		})
	}
	// A remote server: its RSS + the COW against total_system_memory.
	remote := &source.Sample{Info: source.Info{UsedMemory: some(600 * mib), RSS: some(700 * mib), RDBLastCOW: some(300 * mib),
		TotalSystemMemory: some(960 * mib)}}
	if got, _ := forkRisk("10.0.0.7:6379", remote, nil, false); got != "10.0.0.7:6379: a fork save may need 0.98 GiB (RSS 700 MiB + last COW 300 MiB) but the host has 960 MiB in all (total_system_memory)" {
		t.Errorf("total_system_memory: %q", got)
	}
	// An AOF rewrite is checked against the cgroup too.
	if got, _ := forkRisk("127.0.0.1:6379", sample(some(800*mib), some(1024*mib), none, none), nil, true); !strings.HasPrefix(got, "127.0.0.1:6379: an AOF rewrite (a fork) may need 1.07 GiB (cgroup usage") {
		t.Errorf("AOF rewrite: %q", got)
	}
}

// riskyScenario is the two-server scenario to 40 s (server A's fork save,
// 20-35 s, peaked at 18 MiB of live COW) followed by one sample of A with
// maxmemory set just under used_memory + 18 MiB, and of B (forkless) with
// the same.
func riskyScenario() []source.Event {
	evs := scenario(2, 40*time.Second)
	for i, f := range []*fakeServer{newFake(0, false), newFake(1, true)} {
		f.seq = 10000
		ev := f.sampleEvent(40*time.Second + time.Duration(i)*time.Millisecond)
		ev.Sample.Info.MaxMemory = source.Some(ev.Sample.Info.UsedMemory.V + 17*mib)
		evs = append(evs, ev)
	}
	return evs
}

// warnText is what the footer says about server A in riskyScenario.
func warnText(t *testing.T, m Model) string {
	t.Helper()
	s := m.store.Live(nodeOf(0)).Latest
	used, maxmem := s.Info.UsedMemory.V, s.Info.MaxMemory.V
	return addrA + ": a fork save may need " + fmtBytes(used+18*mib) + " (used " + fmtBytes(used) +
		" + last COW 18.0 MiB) but maxmemory is " + fmtBytes(maxmem)
}

func TestForkWarningThenConfirm(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send}, 200, 50, riskyScenario())
	m, cmd := press(m, "b")
	if cmd != nil {
		run(t, cmd)
		t.Fatalf("b sent despite the warning: %v", log.got())
	}
	want := footAt + warnText(t, m) + "; press b again to save anyway"
	if l := lineWith(t, m, "a fork save may need"); strings.TrimSpace(l) != want {
		t.Fatalf("footer\n got %q\nwant %q", l, want)
	}
	if !strings.Contains(view(m), "b again: save anyway • any other key: cancel") {
		t.Errorf("help line should say how to confirm:\n%s", view(m))
	}
	// Events in between are not keys: the confirmation still holds.
	a := newFake(0, false)
	a.seq = 20000
	m = feed(t, m, []source.Event{a.sampleEvent(41 * time.Second)})
	m, cmd = press(m, "b")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGSAVE"}) {
		t.Fatalf("confirmed b: ran %d, sent %v", n, log.got())
	}
	if v := view(m); strings.Contains(v, "a fork save may need") || !strings.Contains(v, "sending BGSAVE to "+addrA) ||
		strings.Contains(v, "save anyway") {
		t.Errorf("after confirming:\n%s", v)
	}
}

func TestForkWarningThenOtherKeyCancels(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send}, 200, 50, riskyScenario())
	m, _ = press(m, "b")
	if !key.Matches(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b")}, m.confirm.key) {
		t.Fatal("no warning")
	}
	// Another key cancels and does its own job: tab moves the focus.
	m, cmd := press(m, "tab")
	run(t, cmd)
	if v := view(m); strings.Contains(v, "a fork save may need") || strings.Contains(v, "save anyway") || m.focus != 1 {
		t.Fatalf("tab should cancel the pending save and move focus:\n%s", v)
	}
	m, _ = press(m, "shift+tab")
	// b now is a new first press: it warns again, it does not send.
	m, cmd = press(m, "b")
	run(t, cmd)
	if len(log.got()) != 0 || !strings.Contains(view(m), "press b again") {
		t.Fatalf("b after a cancel should warn again, sent %v:\n%s", log.got(), view(m))
	}
	// An unbound key cancels too.
	m, _ = press(m, "z")
	m, cmd = pressKey(m, tea.KeyEsc)
	run(t, cmd)
	if len(log.got()) != 0 || m.confirm.key.Enabled() || strings.Contains(view(m), "save anyway") {
		t.Fatalf("z should cancel, sent %v", log.got())
	}
}

func TestForkWarningForBoth(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send}, 200, 50, riskyScenario())
	// Server B saves forkless: only A warns, and B gets nothing either.
	m, cmd := press(m, "B")
	run(t, cmd)
	if len(log.got()) != 0 {
		t.Fatalf("B sent despite a warning: %v", log.got())
	}
	foot := lineWith(t, m, "a fork save may need")
	if !strings.Contains(foot, warnText(t, m)+"; press B again to save anyway") || strings.Contains(foot, addrB) {
		t.Fatalf("footer %q", foot)
	}
	// b is not B: it cancels B and is checked on its own (A is focused).
	m, cmd = press(m, "b")
	run(t, cmd)
	if len(log.got()) != 0 || !strings.Contains(view(m), "press b again") {
		t.Fatalf("b after B: sent %v:\n%s", log.got(), view(m))
	}
	m, _ = press(m, "B")
	m, cmd = press(m, "B")
	if n := run(t, cmd); n != 2 || !slices.Equal(log.got(), []string{"0 BGSAVE", "1 BGSAVE"}) {
		t.Fatalf("confirmed B: ran %d, sent %v", n, log.got())
	}
}

func TestForkWarningBothServers(t *testing.T) {
	// Both servers fork and both are short of memory: one warning each,
	// then one note on how to confirm.
	evs := riskyScenario()
	b := newFake(1, false)
	b.seq = 30000
	ev := b.sampleEvent(40*time.Second + 5*time.Millisecond)
	ev.Sample.Info.RDBLastCOW = source.Some[int64](50 * mib)
	ev.Sample.Proc.HostMemAvailable = source.Some[int64](20 * mib)
	evs = append(evs, ev)
	var log sendLog
	// Wide enough for both warnings; narrower, the footer is cut and the
	// help line still says how to confirm.
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send}, 300, 50, evs)
	m, cmd := press(m, "B")
	run(t, cmd)
	foot := lineWith(t, m, "a fork save may need")
	// B writes and has no save of its own to calibrate on: its forecast
	// is the uniform bound, larger than the last COW, and says so.
	wantB := addrB + ": a fork save may need 95.7 MiB more (its forecast COW (uniform bound)) but only 20.0 MiB is available (MemAvailable)"
	if len(log.got()) != 0 || !strings.Contains(foot, warnText(t, m)+"  │  ") ||
		!strings.Contains(foot, wantB+"  │  press B again to save anyway") {
		t.Fatalf("sent %v, footer %q", log.got(), foot)
	}
	// b with B's pane focused warns about B alone.
	m, _ = press(m, "tab")
	m, _ = press(m, "b")
	if foot := lineWith(t, m, "a fork save may need"); strings.Contains(foot, addrA) || !strings.Contains(foot, wantB) {
		t.Errorf("b on server B: footer %q", foot)
	}
}

func TestNoForkWarningWithoutRisk(t *testing.T) {
	// The plain scenario: no maxmemory, no MemAvailable. b sends at once.
	var log sendLog
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send}, 200, 50, scenario(2, 40*time.Second))
	_, cmd := press(m, "b")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGSAVE"}) {
		t.Fatalf("ran %d, sent %v", n, log.got())
	}
}

// TestAOFRewriteWarning: BGREWRITEAOF forks too (even where saves are
// forkless), so a warns where b would, and a again sends it.
func TestAOFRewriteWarning(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send}, 200, 50, riskyScenario())
	m, cmd := press(m, "a")
	if n := run(t, cmd); n != 0 || len(log.got()) != 0 {
		t.Fatalf("a with a memory risk: ran %d, sent %v", n, log.got())
	}
	foot := strings.TrimSpace(lineWith(t, m, "may need"))
	if !strings.HasPrefix(foot, footAt+addrA+": an AOF rewrite (a fork) may need ") || !strings.HasSuffix(foot, "; press a again to rewrite anyway") {
		t.Fatalf("footer %q", foot)
	}
	_, cmd = press(m, "a")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGREWRITEAOF"}) {
		t.Fatalf("a confirmed: ran %d, sent %v", n, log.got())
	}
}

func TestReadOnlyBeforeForkWarning(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(addrA, addrB), Send: log.send, ReadOnly: true}, 200, 50, riskyScenario())
	for range 2 {
		var cmd tea.Cmd
		m, cmd = press(m, "b")
		run(t, cmd)
		if l := strings.TrimSpace(lineWith(t, m, "read-only")); l != footAt+"read-only: BGSAVE not sent (--read-only)" || m.confirm.key.Enabled() {
			t.Fatalf("footer %q", l)
		}
	}
	if len(log.got()) != 0 {
		t.Errorf("read-only model sent %v", log.got())
	}
}

// TestForkRiskAOF: an AOF rewrite is checked even on a forkless server, and
// aof_last_cow_size counts as evidence of what a fork of this dataset costs.
func TestForkRiskAOF(t *testing.T) {
	s := &source.Sample{
		Info:   source.Info{UsedMemory: source.Some[int64](900 * mib), MaxMemory: source.Some[int64](1000 * mib), AOFLastCOW: source.Some[int64](150 * mib)},
		Config: source.SaveConfig{Method: "forkless"},
	}
	want := "127.0.0.1:6379: an AOF rewrite (a fork) may need 1.03 GiB (used 900 MiB + last COW 150 MiB) but maxmemory is 0.98 GiB"
	if got, warn := forkRisk("127.0.0.1:6379", s, nil, true); !warn || got != want {
		t.Errorf("AOF rewrite on a forkless server: %q, %v\nwant %q", got, warn, want)
	}
	if got, warn := forkRisk("127.0.0.1:6379", s, nil, false); warn {
		t.Errorf("forkless BGSAVE warned: %q", got)
	}
	s.Config.Method = "fork"
	if _, warn := forkRisk("127.0.0.1:6379", s, nil, false); !warn {
		t.Errorf("fork BGSAVE with aof_last_cow_size evidence did not warn")
	}
}

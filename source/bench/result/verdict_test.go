package result

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/units"
)

// withLimits gives every run of s the limits ls.
func withLimits(s []Summary, ls ...Limit) []Summary {
	for i := range s {
		for j := range s[i].Runs {
			s[i].Runs[j].Limits = ls
		}
	}
	return s
}

// limitOf is a limit of cap bytes with base bytes counted against it.
func limitOf(kind risk.LimitKind, cap, base int64) Limit {
	return Limit{Kind: kind, Cap: risk.Figure{Bytes: cap, From: "cap of " + string(kind)}, Base: risk.Figure{Bytes: base, From: "base"}}
}

// TestVerdictSeedNumbers: the seed's figures on a host with memory to
// spare give fork, and every number of the trade is the runs' own.
func TestVerdictSeedNumbers(t *testing.T) {
	s := seedMethods(1.1)
	v := Decide(s)
	if v.Kind != Methods || v.Choice != "fork" || len(v.Missing) != 0 {
		t.Fatalf("verdict %+v", v)
	}
	fork, fl := s[0], s[1]
	peak := int64(0)
	for _, r := range fork.Runs {
		peak = max(peak, r.MemDelta.V, r.ServerCOW.V)
	}
	if sd := v.Sides[0]; sd.Peak != source.Some(peak) || sd.PeakFrom != "memory delta" || sd.Binding.V.Kind != risk.LimitMemAvailable {
		t.Errorf("fork side %+v, want peak %d from the memory delta, against MemAvailable", sd, peak)
	}
	wantFork := []string{"fork: " + units.BytesFixed(fork.COW.Mean) + " copy-on-write", units.CountFloat(fork.WriterOps.Mean) + " writes/s",
		"worst PING " + millis(fork.WorstPing.Mean), secs(fork.SaveTime.Mean)}
	wantFl := []string{"forkless: no copy-on-write", "memory +" + units.BytesFixed(fl.MemDelta.Mean), units.CountFloat(fl.WriterOps.Mean) + " writes/s (-15%)",
		secs(fl.SaveTime.Mean) + " (1.9x)", "worst PING " + millis(fl.WorstPing.Mean), "3 writers blocked at worst"}
	for i, want := range [][]string{wantFork, wantFl} {
		for _, w := range want {
			if !strings.Contains(v.Trade[i], w) {
				t.Errorf("trade %q lacks %q", v.Trade[i], w)
			}
		}
	}
	if strings.Contains(v.Trade[0], "blocked") {
		t.Errorf("fork's trade names blocked writers, none of them blocked: %q", v.Trade[0])
	}
	// 18%: 27,180 against 23,030 writes/s.
	if !strings.Contains(v.Why, "18% more") || !strings.Contains(v.Flips, "forkless once MemAvailable falls below "+bytesText(int64(float64(peak)/0.8+0.5))) {
		t.Errorf("why %q, flips %q", v.Why, v.Flips)
	}
}

// TestVerdictMemoryEdge: at 80% of the limit memory does not bind yet
// (the memory check's tight starts above it); a byte less of limit and it
// binds, and forkless is the choice though fork's writers were faster.
func TestVerdictMemoryEdge(t *testing.T) {
	s := seedMethods(1.1)
	peak := Decide(s).Sides[0].Peak.V
	const base = 100 << 20
	// base + peak = 0.8 cap exactly: cap a multiple of 5 bytes.
	edge := (base + peak) * 5 / 4
	if (base+peak)*5%4 != 0 {
		t.Fatalf("fixture: %d not divisible", (base+peak)*5)
	}
	for _, tt := range []struct {
		cap    int64
		choice string
	}{{edge, "fork"}, {edge - 1, "forkless"}} {
		v := Decide(withLimits(seedMethods(1.1), limitOf(risk.LimitCgroup, tt.cap, base)))
		if v.Choice != tt.choice {
			t.Errorf("cgroup limit %d, base %d, peak %d: choice %q (%s), want %s", tt.cap, base, peak, v.Choice, v.Why, tt.choice)
		}
	}
	v := Decide(withLimits(seedMethods(1.1), limitOf(risk.LimitCgroup, edge-1, base)))
	if !strings.Contains(v.Why, "memory binds") || !strings.Contains(v.Why, "though fork's writers did 18% more") ||
		!strings.Contains(v.Flips, "fork once cgroup is at least "+bytesText(edge)) {
		t.Errorf("binds: why %q, flips %q", v.Why, v.Flips)
	}
}

// TestVerdictTightestLimit: of several limits in several runs, the one
// the peak fills most binds.
func TestVerdictTightestLimit(t *testing.T) {
	s := seedMethods(64)
	s[0].Runs[3].Limits = append(s[0].Runs[3].Limits, limitOf(risk.LimitMaxMemory, 2<<30, 1<<30))
	s[0].Runs[5].Limits = append(s[0].Runs[5].Limits, limitOf(risk.LimitMaxMemory, 2<<30, 1700<<20))
	v := Decide(s)
	b := v.Sides[0].Binding.V
	if b.Kind != risk.LimitMaxMemory || b.Base.Bytes != 1700<<20 || v.Choice != "forkless" {
		t.Errorf("binding %+v, choice %q; want run 6's maxmemory, 1700 MiB used of 2 GiB, and forkless", b, v.Choice)
	}
}

// TestVerdictWriters: with memory to spare, fork only where every fork
// run's writers beat every forkless run's; ranges that touch are within
// the spread, and forkless (no copy-on-write) is the choice.
func TestVerdictWriters(t *testing.T) {
	for _, tt := range []struct {
		name       string
		forkMin    float64
		choice     string
		whyContain string
	}{
		{"beyond the spread", 23061, "fork", "beyond the runs' spread"},
		{"touching", 23060, "forkless", "within the runs' spread"},
		{"forkless faster", 20000, "forkless", "within the runs' spread"},
	} {
		s := seedMethods(64)
		s[0].Runs[0].WriterOps = tt.forkMin
		s[0].Summarise()
		v := Decide(s)
		if v.Choice != tt.choice || !strings.Contains(v.Why, tt.whyContain) {
			t.Errorf("%s: choice %q (%s), want %s", tt.name, v.Choice, v.Why, tt.choice)
		}
	}
	// Every forkless run above every fork run.
	s := seedMethods(64)
	for i := range s[1].Runs {
		s[1].Runs[i].WriterOps = 30000
	}
	s[1].Summarise()
	if v := Decide(s); v.Choice != "forkless" || !strings.Contains(v.Why, "forkless's writers did 10% more") {
		t.Errorf("forkless faster: %q (%s)", v.Choice, v.Why)
	}
}

// TestVerdictMissing: a figure the rule needs is missing: no choice, and
// the verdict names it; a choice that does not rest on it is still made.
func TestVerdictMissing(t *testing.T) {
	noLimits := withLimits(seedMethods(1), nil...)
	v := Decide(noLimits)
	if v.Choice != "" || len(v.Missing) != 1 || !strings.Contains(v.Missing[0], "no cgroup limit, maxmemory, MemAvailable") {
		t.Errorf("no limits, fork faster: choice %q, missing %q", v.Choice, v.Missing)
	}
	// Forkless's writers as fast: forkless whatever the memory.
	s := withLimits(seedMethods(1), nil...)
	s[1].Runs[0].WriterOps = 27500
	s[1].Summarise()
	if v := Decide(s); v.Choice != "forkless" || len(v.Missing) != 0 {
		t.Errorf("no limits, writers alike: choice %q, missing %q", v.Choice, v.Missing)
	}
	// No memory figure of fork's.
	s = seedMethods(64)
	for i := range s[0].Runs {
		s[0].Runs[i].MemDelta, s[0].Runs[i].ServerCOW = source.Opt[int64]{}, source.Opt[int64]{}
	}
	if v := Decide(s); v.Choice != "" || !slices.ContainsFunc(v.Missing, func(m string) bool { return strings.Contains(m, "the memory a fork save cost") }) {
		t.Errorf("no fork memory figure: choice %q, missing %q", v.Choice, v.Missing)
	}
	// A remote host: total_system_memory says a fork cannot fit, never
	// that it can.
	for _, tt := range []struct {
		total  int64
		choice string
	}{{8 << 30, ""}, {1500 << 20, "forkless"}} {
		v := Decide(withLimits(seedMethods(1), limitOf(risk.LimitSystemMemory, tt.total, 1100<<20)))
		if v.Choice != tt.choice {
			t.Errorf("total_system_memory %d: choice %q (%s; missing %q), want %q", tt.total, v.Choice, v.Why, v.Missing, tt.choice)
		}
	}
}

// TestVerdictForcedFork: every run asked forkless forked: they are fork
// runs, no forkless save was measured, and there is no choice.
func TestVerdictForcedFork(t *testing.T) {
	s := seedMethods(64)
	fork := s[0]
	for _, r := range s[1].Runs {
		r.Report.Kind, r.Report.COWFrom = source.SaveFork, source.FromRDBLastCOW
		fork.Runs = append(fork.Runs, r)
	}
	fork.Summarise()
	v := Decide([]Summary{fork})
	if v.Kind != Methods || v.Choice != "" || v.Sides[0].Forced != 7 || len(v.Missing) != 1 ||
		!strings.Contains(v.Missing[0], "the 7 runs asked forkless all forked") || !strings.Contains(v.Trade[0], "7 asked forkless and forked") {
		t.Errorf("verdict %+v", v)
	}
}

// TestVerdictServers: servers compared, each measure's best named where
// its runs all beat the other's, and no method chosen: one method, or two
// on two servers.
func TestVerdictServers(t *testing.T) {
	s := seedMethods(64)
	a, b := s[0], s[0]
	a.Method, b.Method = "", ""
	a.Addr, b.Addr = "a:1", "b:2"
	b.Runs = slices.Clone(b.Runs)
	for i := range b.Runs {
		b.Runs[i].WriterOps = 1000
		b.Runs[i].MemDelta = source.Some[int64](1 << 20)
		b.Runs[i].ServerCOW = source.Some[int64](1 << 20)
	}
	b.Summarise()
	v := Decide([]Summary{a, b})
	if v.Kind != Servers || v.Choice != "" || v.Flips != "" {
		t.Fatalf("verdict %+v", v)
	}
	for _, want := range []string{"least memory: b:2", "shortest save: alike within the runs' spread", "most writes/s: a:1",
		"lowest worst PING: alike within the runs' spread",
		"Only fork was measured: no choice of method"} {
		if !strings.Contains(v.Why, want) {
			t.Errorf("why %q lacks %q", v.Why, want)
		}
	}
	fl := s[1]
	fl.Method, fl.Addr = "", "c:3"
	if v := Decide([]Summary{a, fl}); !strings.Contains(v.Why, "measured on different servers") || v.Choice != "" {
		t.Errorf("fork and forkless servers: %q", v.Why)
	}
	if v := Decide([]Summary{a}); !strings.Contains(v.Why, "only fork was measured") || len(v.Missing) != 0 {
		t.Errorf("one server: %q, missing %q", v.Why, v.Missing)
	}
}

// TestVerdictInJSONAndTable: the verdict is under the table and in the
// JSON, the same sentences; every line of the table's text fits 120
// columns.
func TestVerdictInJSONAndTable(t *testing.T) {
	s := seedMethods(1.1)
	v := Decide(s)
	var tab, js bytes.Buffer
	if err := WriteTable(&tab, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verdict struct {
			Kind   string
			Choice *string
			Trade  []string
			Sides  []struct {
				Peak *int64  `json:"peak_cost_bytes"`
				Fill float64 `json:"binding_fill"`
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Verdict.Kind != "methods" || back.Verdict.Choice == nil || *back.Verdict.Choice != v.Choice ||
		!slices.Equal(back.Verdict.Trade, v.Trade) || *back.Verdict.Sides[0].Peak != v.Sides[0].Peak.V || back.Verdict.Sides[0].Fill != v.Sides[0].Fill {
		t.Errorf("JSON verdict %+v, want %+v", back.Verdict, v)
	}
	text := tab.String()
	if !strings.Contains(text, "choice    fork: memory to spare") || !strings.Contains(text, "verdict: which method for this server") {
		t.Errorf("table without its verdict:\n%s", text)
	}
	// The JSON reads back with the verdict's inputs: the same verdict.
	got, err := ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if w := Decide(got); w.Choice != v.Choice || !slices.Equal(w.Trade, v.Trade) || !slices.Equal(w.Memory, v.Memory) || w.Flips != v.Flips {
		t.Errorf("verdict of the JSON read back\n %+v\nwant\n %+v", w, v)
	}
}

// TestBestOf: a server is named best only where every run of it beats
// every run of each other server; ranges that touch are alike.
func TestBestOf(t *testing.T) {
	sides := func(ranges ...[2]float64) []Side {
		var out []Side
		for i, r := range ranges {
			out = append(out, Side{Addr: string(rune('a' + i)), Save: Stat{Min: r[0], Max: r[1], Mean: (r[0] + r[1]) / 2, N: 2}})
		}
		return out
	}
	save := func(s Side) Stat { return s.Save }
	for _, tt := range []struct {
		sides []Side
		low   bool
		want  string
	}{
		{sides([2]float64{1, 2}, [2]float64{2.5, 3}, [2]float64{4, 5}), true, "a"},
		{sides([2]float64{1, 2}, [2]float64{2, 3}), true, "alike within the runs' spread"},
		{sides([2]float64{1, 2}, [2]float64{2.5, 3}, [2]float64{0, 1.5}), true, "alike within the runs' spread"},
		{sides([2]float64{1, 2}, [2]float64{2.5, 3}), false, "b"},
	} {
		if got := bestOf(tt.sides, save, tt.low); got != tt.want {
			t.Errorf("bestOf(%+v, low %v) = %q, want %q", tt.sides, tt.low, got, tt.want)
		}
	}
}

package risk

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

var some, none = source.Some[int64], source.Opt[int64]{}

func sample(used, maxmem, avail, lastCOW source.Opt[int64], method string) *source.Sample {
	return &source.Sample{
		Info:   source.Info{UsedMemory: used, MaxMemory: maxmem, RDBLastCOW: lastCOW},
		Config: source.SaveConfig{Method: method},
		Proc:   source.ProcMem{HostMemAvailable: avail},
	}
}

// verdict is a Fork in short: level, the deciding limit and its numbers.
func verdict(f Fork) string {
	c, ok := f.Decisive()
	if !ok {
		return fmt.Sprintf("%s (%s)", f.Level, f.Why)
	}
	return fmt.Sprintf("%s: %s cap %d need %d = %d + cow %d (%s) headroom %d",
		f.Level, c.Limit, c.Cap.Bytes/mib, c.Need/mib, c.Base.Bytes/mib, f.COW.V.Bytes/mib, f.COW.V.From, c.Headroom/mib)
}

func TestAssess(t *testing.T) {
	report := &source.SaveReport{PeakLiveCOW: some(350 * mib)}
	cases := []struct {
		name string
		s    *source.Sample
		last *source.SaveReport
		want string
	}{
		{"MemAvailable, COW from the report", sample(some(880*mib), none, some(300*mib), some(100*mib), ""), report,
			"would exceed: MemAvailable cap 300 need 350 = 0 + cow 350 (the last save's peak current_cow_size (INFO)) headroom -50"},
		{"MemAvailable counts COW only: used memory is already resident", sample(some(880*mib), none, some(400*mib), some(100*mib), ""), report,
			"tight: MemAvailable cap 400 need 350 = 0 + cow 350 (the last save's peak current_cow_size (INFO)) headroom 50"},
		{"maxmemory, COW from INFO", sample(some(900*mib), some(gib), none, some(200*mib), "fork"), nil,
			"would exceed: maxmemory cap 1024 need 1100 = 900 + cow 200 (INFO rdb_last_cow_size) headroom -76"},
		{"both exceeded: MemAvailable is named", sample(some(900*mib), some(gib), some(100*mib), some(200*mib), ""), nil,
			"would exceed: MemAvailable cap 100 need 200 = 0 + cow 200 (INFO rdb_last_cow_size) headroom -100"},
		{"fits under both", sample(some(400*mib), some(gib), some(2*gib), some(200*mib), ""), report,
			"ok: MemAvailable cap 2048 need 350 = 0 + cow 350 (the last save's peak current_cow_size (INFO)) headroom 1698"},
		{"exactly at maxmemory is tight, not over", sample(some(gib-200*mib), some(gib), none, some(200*mib), ""), nil,
			"tight: maxmemory cap 1024 need 1024 = 824 + cow 200 (INFO rdb_last_cow_size) headroom 0"},
		{"maxmemory 0 means no limit", sample(some(900*mib), some(0), none, some(200*mib), ""), nil, "ok (no limit read)"},
		{"no COW ever observed", sample(some(900*mib), some(gib), some(mib), some(0), ""), nil, "unknown (no copy-on-write observed yet)"},
		{"COW field absent, no report", sample(some(900*mib), some(gib), some(mib), none, ""), nil, "unknown (no copy-on-write observed yet)"},
		{"forkless: no fork", sample(some(900*mib), some(gib), some(mib), some(200*mib), "forkless"), report, "unknown (forkless (if no module forces a fork): no child to copy pages for)"},
		{"used_memory absent", sample(none, some(gib), some(mib), some(200*mib), ""), report, "unknown (used_memory absent)"},
		{"no sample yet", nil, report, "unknown (no sample yet)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := Assess(Input{Sample: tc.s, Last: tc.last})
			got := verdict(f)
			if f.Level == OK && len(f.Checks) == 0 {
				got = "ok (no limit read)"
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if f.Exceeds() != (f.Level == WouldExceed) {
				t.Errorf("Exceeds %v at level %s", f.Exceeds(), f.Level)
			}
		})
	}
}

// TestAssessCgroupAndSystem: the cgroup counts its usage + the COW, between
// MemAvailable and maxmemory; total_system_memory counts RSS + COW, and
// only where MemAvailable cannot be read (a remote server).
func TestAssessCgroupAndSystem(t *testing.T) {
	s := &source.Sample{
		Info: source.Info{UsedMemory: some(600 * mib), RSS: some(700 * mib), MaxMemory: some(800 * mib), RDBLastCOW: some(300 * mib),
			TotalSystemMemory: some(960 * mib)},
		Proc: source.ProcMem{Cgroup: "v2:/system.slice/valkey.service", CgroupUsage: some(800 * mib), CgroupLimit: some(1024 * mib)},
	}
	f := Assess(Input{Sample: s})
	if got, want := verdict(f), "would exceed: cgroup cap 1024 need 1100 = 800 + cow 300 (INFO rdb_last_cow_size) headroom -76"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var kinds []LimitKind
	for _, c := range f.Checks {
		kinds = append(kinds, c.Limit)
	}
	if fmt.Sprint(kinds) != "[cgroup maxmemory total_system_memory]" {
		t.Errorf("checks %v", kinds)
	}
	if c := f.Checks[2]; c.Base.From != "INFO used_memory_rss" || c.Need != 1000*mib || c.Level != WouldExceed {
		t.Errorf("total_system_memory check %+v", c)
	}
	// A local server: MemAvailable is read, total_system_memory is not checked.
	s.Proc.HostMemAvailable = some(8 * gib)
	for _, c := range Assess(Input{Sample: s}).Checks {
		if c.Limit == LimitSystemMemory {
			t.Errorf("total_system_memory checked beside MemAvailable: %+v", c)
		}
	}
	// An AOF rewrite forks on a forkless server too, and aof_last_cow_size counts.
	s = sample(some(900*mib), some(1000*mib), none, none, "forkless")
	s.Info.AOFLastCOW = some(150 * mib)
	if f := Assess(Input{Sample: s, AOF: true}); !f.Exceeds() || f.COW.V.From != "INFO aof_last_cow_size" {
		t.Errorf("AOF rewrite on a forkless server: %s", verdict(f))
	}
	if f := Assess(Input{Sample: s}); f.Level != Unknown {
		t.Errorf("forkless BGSAVE judged: %s", verdict(f))
	}
}

// TestAssessForecast: a forecast larger than what was seen is the COW
// checked, with its basis; a smaller one changes nothing.
func TestAssessForecast(t *testing.T) {
	s := sample(some(700*mib), some(gib), none, some(100*mib), "")
	fc := source.Some(Figure{Bytes: 400 * mib, From: "forecast: 40% of pages written at 5,000 writes/s"})
	f := Assess(Input{Sample: s, Forecast: fc})
	if !f.Exceeds() || f.COW != fc || f.Seen.V.Bytes != 100*mib || f.Forecast != fc {
		t.Errorf("with a forecast: %s, seen %+v", verdict(f), f.Seen)
	}
	fc.V.Bytes = 50 * mib
	if f := Assess(Input{Sample: s, Forecast: fc}); f.COW.V.From != "INFO rdb_last_cow_size" || f.Level != OK {
		t.Errorf("with a smaller forecast: %s", verdict(f))
	}
	// A forecast is evidence where nothing was seen yet.
	if f := Assess(Input{Sample: sample(some(900*mib), some(gib), none, some(0), ""), Forecast: source.Some(Figure{Bytes: 200 * mib, From: "forecast"})}); !f.Exceeds() {
		t.Errorf("forecast without a COW seen: %s", verdict(f))
	}
	// An idle server's forecast is 0 B: the footprint is still checked
	// (it fits here), where a seen 0 alone says nothing.
	idle := sample(some(700*mib), some(gib), none, some(0), "")
	if f := Assess(Input{Sample: idle, Forecast: source.Some(Figure{Bytes: 0, From: "forecast"})}); f.Level != OK || len(f.Checks) == 0 {
		t.Errorf("a forecast of 0 B: %s", verdict(f))
	}
	if f := Assess(Input{Sample: sample(some(gib+mib), some(gib), none, some(0), ""), Forecast: source.Some(Figure{Bytes: 0, From: "forecast"})}); !f.Exceeds() {
		t.Errorf("a forecast of 0 B over maxmemory already: %s", verdict(f))
	}
}

// TestAssessRealServer judges a real server's fork from its own INFO: a
// save made while every key is overwritten leaves rdb_last_cow_size > 0,
// maxmemory is set just above used_memory, and the verdict names
// maxmemory with the server's figures; total_system_memory, which every
// server since Redis 3.2 reports, is the remote check.
func TestAssessRealServer(t *testing.T) {
	// 20,000 keys at 50 µs: a save of about a second, overwritten meanwhile.
	const keys = 20000
	_, c := servertest.StartSlowSave(t, keys, 200, 50)
	ctx := context.Background()
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	info := func() source.Info { return source.ParseInfo(c.Info(ctx, "memory", "persistence").Val()) }
	for i := 0; info().RDBInProgress.V == 1; i = (i + 1) % keys {
		c.Set(ctx, fmt.Sprintf("key:%d", i), "overwritten during the save: every page it touches is copied for the child", 0)
	}
	servertest.WaitFor(t, 10*time.Second, "the save to end with a COW", func() bool {
		in := info()
		return in.RDBInProgress.V == 0 && in.RDBLastCOW.V > 0
	})
	in := info()
	if !in.TotalSystemMemory.OK {
		t.Fatal("total_system_memory not read from INFO")
	}
	maxmem := in.UsedMemory.V + in.RDBLastCOW.V/2
	if err := c.ConfigSet(ctx, "maxmemory", fmt.Sprint(maxmem)).Err(); err != nil {
		t.Fatal(err)
	}
	in = info()
	f := Assess(Input{Sample: &source.Sample{Info: in}})
	d, ok := f.Decisive()
	if !f.Exceeds() || !ok || d.Limit != LimitMaxMemory || d.Cap.Bytes != maxmem || d.Base.Bytes != in.UsedMemory.V ||
		f.COW.V != (Figure{in.RDBLastCOW.V, "INFO rdb_last_cow_size"}) || d.Headroom != maxmem-in.UsedMemory.V-in.RDBLastCOW.V {
		t.Fatalf("verdict %s, decisive %+v", verdict(f), d)
	}
	if last := f.Checks[len(f.Checks)-1]; last.Limit != LimitSystemMemory || last.Cap.Bytes != in.TotalSystemMemory.V || last.Base.Bytes != in.RSS.V {
		t.Errorf("total_system_memory check %+v", last)
	}
}

package words

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

const mib = 1 << 20

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
			got, warn := ForkRisk("127.0.0.1:6379", tc.s, tc.last, false)
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
			got, warn := ForkRisk("127.0.0.1:6379", tc.s, nil, false)
			if got != tc.want || warn != (tc.want != "") {
				t.Errorf("forkRisk = %q, %v\nwant %q", got, warn, tc.want)
			}
		})
	}
	// A remote server: its RSS + the COW against total_system_memory.
	remote := &source.Sample{Info: source.Info{UsedMemory: some(600 * mib), RSS: some(700 * mib), RDBLastCOW: some(300 * mib),
		TotalSystemMemory: some(960 * mib)}}
	if got, _ := ForkRisk("10.0.0.7:6379", remote, nil, false); got != "10.0.0.7:6379: a fork save may need 0.98 GiB (RSS 700 MiB + last COW 300 MiB) but the host has 960 MiB in all (total_system_memory)" {
		t.Errorf("total_system_memory: %q", got)
	}
	// An AOF rewrite is checked against the cgroup too.
	if got, _ := ForkRisk("127.0.0.1:6379", sample(some(800*mib), some(1024*mib), none, none), nil, true); !strings.HasPrefix(got, "127.0.0.1:6379: an AOF rewrite (a fork) may need 1.07 GiB (cgroup usage") {
		t.Errorf("AOF rewrite: %q", got)
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
	if got, warn := ForkRisk("127.0.0.1:6379", s, nil, true); !warn || got != want {
		t.Errorf("AOF rewrite on a forkless server: %q, %v\nwant %q", got, warn, want)
	}
	if got, warn := ForkRisk("127.0.0.1:6379", s, nil, false); warn {
		t.Errorf("forkless BGSAVE warned: %q", got)
	}
	s.Config.Method = "fork"
	if _, warn := ForkRisk("127.0.0.1:6379", s, nil, false); !warn {
		t.Errorf("fork BGSAVE with aof_last_cow_size evidence did not warn")
	}
}

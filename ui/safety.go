package ui

import (
	"fmt"

	"github.com/vkwatch/vkwatch/source"
)

// forkRisk tells whether a fork save on the server whose latest sample is s
// could run out of memory, judging by the copy-on-write its last saves
// needed, and says so with the numbers. last is the server's latest save
// report (nil when none).
//
// aof says the fork is an AOF rewrite's (BGREWRITEAOF), which forks even
// when saves are forkless. The expected COW is the largest copy-on-write
// seen of any fork of this dataset: rdb_last_cow_size, aof_last_cow_size and
// the last report's peak COW (Sample.COW, /proc or INFO) and peak live COW.
// Three limits are checked, and the first one exceeded is named:
//   - the host's MemAvailable (local server, from /proc): the child's COW
//     pages are new memory the host must find, while used_memory is
//     already resident and so already outside MemAvailable; it warns when
//     COW > MemAvailable. This is the one that ends in the host's OOM
//     killer, so it is named first.
//   - the limit of the server's memory cgroup, when one is set (a local
//     server in a container or a systemd unit with MemoryMax): the child
//     is charged to the same cgroup, so it warns when the cgroup's usage +
//     COW > its limit, where the container's OOM killer strikes. The usage
//     counts page cache the kernel would reclaim first, so this errs
//     towards warning.
//   - maxmemory, when set: operators size it as the server's whole memory
//     budget, so it warns when used_memory + COW > maxmemory.
//
// It does not warn without evidence: no sample, used_memory absent, no COW
// ever observed (a server that never saved reports rdb_last_cow_size 0),
// or a forkless save method (there is no child to copy pages for).
func forkRisk(addr string, s *source.Sample, last *source.SaveReport, aof bool) (string, bool) {
	if s == nil || (!aof && s.Config.Method == "forkless") {
		return "", false
	}
	used, ok := s.Info.UsedMemory.Get()
	if !ok {
		return "", false
	}
	cow := max(s.Info.RDBLastCOW.Or(0), s.Info.AOFLastCOW.Or(0))
	if last != nil {
		cow = max(cow, last.PeakLiveCOW.Or(0), last.PeakCOW.Or(0))
	}
	if cow <= 0 {
		return "", false
	}
	if avail, ok := s.Proc.HostMemAvailable.Get(); ok && cow > avail {
		return fmt.Sprintf("%s: %s may need %s more (its last COW) but only %s is available (MemAvailable)",
			addr, forkName(aof), fmtBytes(cow), fmtBytes(avail)), true
	}
	limit, ok1 := s.Proc.CgroupLimit.Get()
	usage, ok2 := s.Proc.CgroupUsage.Get()
	if ok1 && ok2 && usage+cow > limit {
		return fmt.Sprintf("%s: %s may need %s (cgroup usage %s + last COW %s) but the cgroup's limit is %s (%s)",
			addr, forkName(aof), fmtBytes(usage+cow), fmtBytes(usage), fmtBytes(cow), fmtBytes(limit), s.Proc.Cgroup), true
	}
	if maxmem, ok := s.Info.MaxMemory.Get(); ok && maxmem > 0 && used+cow > maxmem {
		return fmt.Sprintf("%s: %s may need %s (used %s + last COW %s) but maxmemory is %s",
			addr, forkName(aof), fmtBytes(used+cow), fmtBytes(used), fmtBytes(cow), fmtBytes(maxmem)), true
	}
	return "", false
}

// forkName names the fork in a warning.
func forkName(aof bool) string {
	if aof {
		return "an AOF rewrite (a fork)"
	}
	return "a fork save"
}

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
// the last report's peak live COW. Two limits are checked:
//   - the host's MemAvailable (local server, from /proc): the child's COW
//     pages are new memory the host must find, while used_memory is
//     already resident and so already outside MemAvailable; it warns when
//     COW > MemAvailable. This is the one that ends in the OOM killer, so
//     it is named first.
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
		if v, ok := last.PeakLiveCOW.Get(); ok && v > cow {
			cow = v
		}
	}
	if cow <= 0 {
		return "", false
	}
	if avail, ok := s.Proc.HostMemAvailable.Get(); ok && cow > avail {
		return fmt.Sprintf("%s: %s may need %s more (its last COW) but only %s is available (MemAvailable)",
			addr, forkName(aof), fmtBytes(cow), fmtBytes(avail)), true
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

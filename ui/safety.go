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
// The save's footprint is estimated as used_memory plus the last observed
// COW: the larger of rdb_last_cow_size and the report's peak live COW. It
// warns when that exceeds maxmemory (when set) or the host's MemAvailable
// (when /proc could be read), naming the smaller limit exceeded.
//
// It does not warn without evidence: no sample, used_memory absent, no COW
// ever observed (a server that never saved reports rdb_last_cow_size 0),
// or a forkless save method (there is no child to copy pages for).
func forkRisk(addr string, s *source.Sample, last *source.SaveReport) (string, bool) {
	if s == nil || s.Config.Method == "forkless" {
		return "", false
	}
	used, ok := s.Info.UsedMemory.Get()
	if !ok {
		return "", false
	}
	cow := s.Info.RDBLastCOW.Or(0)
	if last != nil {
		if v, ok := last.PeakLiveCOW.Get(); ok && v > cow {
			cow = v
		}
	}
	if cow <= 0 {
		return "", false
	}
	need := used + cow
	limit, name := int64(-1), ""
	if v, ok := s.Info.MaxMemory.Get(); ok && v > 0 && need > v {
		limit, name = v, "maxmemory"
	}
	if v, ok := s.Proc.HostMemAvailable.Get(); ok && need > v && (limit < 0 || v < limit) {
		limit, name = v, "MemAvailable"
	}
	if limit < 0 {
		return "", false
	}
	return fmt.Sprintf("%s: a fork save may need %s more (last COW %s) but only %s is available (%s)",
		addr, fmtBytes(need), fmtBytes(cow), fmtBytes(limit), name), true
}

package ui

import (
	"fmt"
	"strings"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/ui/text"
)

// forkRisk tells whether a fork on the server whose latest sample is s
// could run out of memory, as source/risk judges it from the copy-on-write
// its last forks needed (last is its latest save report, nil when none),
// and says so with the numbers. aof says the fork is an AOF rewrite's.
// It warns only when a limit would be exceeded: a tight fit is left to
// the user, as before.
//
// fc is the node's forecast (source/forecast), absent when none: the
// check then projects the larger of it and the last COW seen.
func forkRisk(addr string, s *source.Sample, last *source.SaveReport, aof bool, fc ...source.Opt[forecast.Forecast]) (string, bool) {
	in := risk.Input{Sample: s, Last: last, AOF: aof}
	if len(fc) > 0 && !aof {
		// The forecast is of a BGSAVE; an AOF rewrite has its own cost.
		in.Forecast = forecast.RiskFigure(fc[0])
	}
	f := risk.Assess(in)
	if !f.Exceeds() {
		return "", false
	}
	return ForkWarning(addr, f), true
}

// ForkWarning is the sentence for a fork a limit would not hold: the
// projected footprint, what it is made of, and the limit named with its
// instrument. Empty when f exceeds nothing. The save command prints the
// same sentence.
func ForkWarning(addr string, f risk.Fork) string {
	c, ok := f.Decisive()
	if !ok || !f.Exceeds() {
		return ""
	}
	what, cow := forkName(f.AOF), cowName(f)
	switch c.Limit {
	case risk.LimitMemAvailable:
		return fmt.Sprintf("%s: %s may need %s more (%s) but only %s is available (MemAvailable)",
			addr, what, text.Bytes(c.Need), "its "+cow, text.Bytes(c.Cap.Bytes))
	case risk.LimitCgroup:
		return fmt.Sprintf("%s: %s may need %s (cgroup usage %s + %s %s) but the cgroup's limit is %s (%s)",
			addr, what, text.Bytes(c.Need), text.Bytes(c.Base.Bytes), cow, text.Bytes(f.COW.V.Bytes), text.Bytes(c.Cap.Bytes), c.Cgroup)
	case risk.LimitMaxMemory:
		return fmt.Sprintf("%s: %s may need %s (used %s + %s %s) but maxmemory is %s",
			addr, what, text.Bytes(c.Need), text.Bytes(c.Base.Bytes), cow, text.Bytes(f.COW.V.Bytes), text.Bytes(c.Cap.Bytes))
	case risk.LimitSystemMemory:
		return fmt.Sprintf("%s: %s may need %s (RSS %s + %s %s) but the host has %s in all (total_system_memory)",
			addr, what, text.Bytes(c.Need), text.Bytes(c.Base.Bytes), cow, text.Bytes(f.COW.V.Bytes), text.Bytes(c.Cap.Bytes))
	}
	return fmt.Sprintf("%s: %s may need %s but %s is %s", addr, what, text.Bytes(c.Need), c.Cap.From, text.Bytes(c.Cap.Bytes))
}

// cowName names the COW a warning projects: the last one seen, or a
// forecast when the forecast is the larger.
func cowName(f risk.Fork) string {
	if fc, ok := f.Forecast.Get(); ok && f.COW.V == fc {
		// "forecast (uniform bound)" -> "forecast COW (uniform bound)"
		return "forecast COW" + strings.TrimPrefix(fc.From, "forecast")
	}
	return "last COW"
}

// forkName names the fork in a warning.
func forkName(aof bool) string {
	if aof {
		return "an AOF rewrite (a fork)"
	}
	return "a fork save"
}

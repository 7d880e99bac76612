// Package risk judges whether a fork (a BGSAVE's child, or a BGREWRITEAOF's)
// fits in the memory the server has, before it is started, and says so as
// numbers: the copy-on-write the fork is expected to need and where that
// figure comes from, every memory limit that could be read (its instrument,
// what is already counted against it, the projected footprint, the
// headroom left) and a level for each and for the whole. It writes no
// sentence: the UI and the save command write theirs from these numbers.
//
// The expected copy-on-write is the largest seen of any fork of this
// dataset: rdb_last_cow_size, aof_last_cow_size, and the last save report's
// peak COW (Sample.COW, /proc or INFO) and peak live COW (current_cow_size).
// A forecast of the next fork's COW (Input.Forecast) joins them when one is
// given; the larger figure is the one checked, so that a forecast can only
// add caution.
//
// The limits, in the order they are named when several are exceeded:
//   - MemAvailable of the host (a local server, /proc/meminfo): the
//     child's COW pages are new memory the host must find, while
//     used_memory is already resident and so already outside MemAvailable;
//     the projection is the COW alone. This is the one that ends in the
//     host's OOM killer, so it is named first.
//   - the limit of the server's memory cgroup, when one is set (a local
//     server in a container or a systemd unit with MemoryMax): the child is
//     charged to the same cgroup, so the projection is the cgroup's usage
//     plus the COW, where the container's OOM killer strikes. The usage
//     counts page cache the kernel would reclaim first, so this errs
//     towards warning.
//   - maxmemory, when set: operators size it as the server's whole memory
//     budget, so the projection is used_memory plus the COW.
//   - total_system_memory, for a server whose host vkwatch cannot read (a
//     remote one: no MemAvailable): the projection is used_memory_rss plus
//     the COW against all the host's memory. Other processes share it, so
//     this can only say that a fork cannot fit, never that it will.
//
// There is no verdict without evidence: no sample, used_memory absent, no
// COW ever observed (a server that never saved reports rdb_last_cow_size
// 0), or a forkless save method (there is no child to copy pages for).
package risk

import (
	"github.com/vkwatch/vkwatch/source"
)

// Level is how a fork's projected footprint stands against a limit.
type Level int

const (
	// Unknown: no verdict, for want of evidence (Fork.Why says which).
	Unknown Level = iota
	// OK: the projection stays under TightShare of the limit.
	OK
	// Tight: the projection fits, but above TightShare of the limit.
	Tight
	// WouldExceed: the projection is over the limit.
	WouldExceed
)

func (l Level) String() string {
	return [...]string{"unknown", "ok", "tight", "would exceed"}[l]
}

// TightShare is the share of a limit above which a fork that fits is
// called tight: the COW checked is what earlier forks needed, and the next
// one needs more when writes are heavier during it. (BetterDB Monitor warns
// at 80% of total_system_memory, too.)
const TightShare = 0.8

// LimitKind names a memory limit a fork is checked against.
type LimitKind string

const (
	LimitMemAvailable LimitKind = "MemAvailable"
	LimitCgroup       LimitKind = "cgroup"
	LimitMaxMemory    LimitKind = "maxmemory"
	LimitSystemMemory LimitKind = "total_system_memory"
)

// Figure is a number of bytes and the instrument it was read from.
type Figure struct {
	Bytes int64
	// From names the instrument (an INFO field, a /proc file, a report's
	// figure, a forecast's basis), for the screen and recordings.
	From string
}

// Check is one limit and the fork's projection against it.
type Check struct {
	Limit LimitKind
	// Cap is the limit itself, Cap.From its instrument ("/proc/meminfo
	// MemAvailable", "INFO maxmemory", the cgroup's memory.max, ...).
	Cap Figure
	// Base is what already counts against the limit before the fork (the
	// cgroup's usage, used_memory, used_memory_rss); zero with an empty
	// From for MemAvailable, which used memory is already outside of.
	Base Figure
	// Need is the projected footprint against the limit: Base plus the
	// COW checked. Headroom is Cap minus Need, negative when it would
	// exceed.
	Need     int64
	Headroom int64
	Level    Level
	// Cgroup names the cgroup of a LimitCgroup check ("v2:/path"), as
	// source.ProcMem.Cgroup does; empty for the others.
	Cgroup string
}

// Fork is the verdict on one fork, with every number it was drawn from.
type Fork struct {
	// AOF says the fork is an AOF rewrite's (BGREWRITEAOF), which forks
	// even on a server whose saves are forkless.
	AOF bool
	// Used and RSS are used_memory and used_memory_rss (INFO) of the
	// sample judged.
	Used, RSS source.Opt[int64]
	// Seen is the largest COW observed of any fork of this dataset, with
	// the instrument of that figure; absent (or 0) when none was.
	Seen source.Opt[Figure]
	// Forecast is the forecast of this fork's COW the caller gave
	// (Input.Forecast), with its basis in From; absent when none.
	Forecast source.Opt[Figure]
	// COW is the copy-on-write checked against the limits: the larger of
	// Seen and Forecast (absent when Level is Unknown for want of one).
	COW source.Opt[Figure]
	// Checks are the limits that could be read, in the order above.
	Checks []Check
	// Level is the worst level of the checks (OK with no limit to check
	// against), Unknown without evidence; Worst is the index in Checks of
	// the first check at that level, -1 when none.
	Level Level
	Worst int
	// Why says why the level is Unknown ("forkless", "no COW observed
	// yet", ...), empty otherwise.
	Why string
}

// Exceeds reports whether the fork's projection is over a limit.
func (f Fork) Exceeds() bool { return f.Level == WouldExceed }

// Decisive returns the check that decides the level, and whether there
// is one.
func (f Fork) Decisive() (Check, bool) {
	if f.Worst < 0 || f.Worst >= len(f.Checks) {
		return Check{}, false
	}
	return f.Checks[f.Worst], true
}

// Input is what a fork is judged by.
type Input struct {
	// Sample is the server's latest sample; nil before the first.
	Sample *source.Sample
	// Last is the server's latest save report; nil when none.
	Last *source.SaveReport
	// AOF: judge a BGREWRITEAOF's fork rather than a BGSAVE.
	AOF bool
	// Forecast is a forecast of the fork's COW (its basis in From), when
	// the caller has one; it is checked when it is larger than Seen.
	Forecast source.Opt[Figure]
}

// Assess judges the fork in.
func Assess(in Input) Fork {
	f := Fork{AOF: in.AOF, Worst: -1, Forecast: in.Forecast}
	s := in.Sample
	switch {
	case s == nil:
		f.Why = "no sample yet"
		return f
	case !in.AOF && s.Config.Method == "forkless" && (in.Last == nil || in.Last.MethodNote == ""):
		// The last save forked anyway (a module that cannot save
		// forklessly): the next will too, and is checked as a fork.
		f.Why = "forkless (if no module forces a fork): no child to copy pages for"
		return f
	}
	f.Used, f.RSS = s.Info.UsedMemory, s.Info.RSS
	f.Seen = seenCOW(s, in.Last)
	cow := f.Seen
	// A forecast is evidence where nothing was seen yet, even a forecast of
	// 0 B (an idle server: no writes, no pages to copy): the fork still
	// needs the footprint it has. A seen 0 is INFO's "no fork yet".
	forecast := false
	if fc, ok := in.Forecast.Get(); ok && (!cow.OK || fc.Bytes > cow.V.Bytes || cow.V.Bytes <= 0) {
		cow, forecast = in.Forecast, true
	}
	used, ok := f.Used.Get()
	switch {
	case !ok:
		f.Why = "used_memory absent"
		return f
	case !cow.OK || cow.V.Bytes < 0 || cow.V.Bytes == 0 && !forecast:
		f.Why = "no copy-on-write observed yet"
		return f
	}
	f.COW = cow
	f.Checks = checks(s, used, cow.V.Bytes)
	f.Level = OK
	for i, c := range f.Checks {
		if c.Level > f.Level || f.Worst < 0 && c.Level == f.Level {
			f.Level, f.Worst = c.Level, i
		}
	}
	return f
}

// seenCOW is the largest COW of any fork of this dataset seen so far, with
// its instrument: INFO's last COW of a save or a rewrite, the last report's
// peaks.
func seenCOW(s *source.Sample, last *source.SaveReport) source.Opt[Figure] {
	var best source.Opt[Figure]
	take := func(o source.Opt[int64], from string) {
		if v, ok := o.Get(); ok && (!best.OK || v > best.V.Bytes) {
			best = source.Some(Figure{Bytes: v, From: from})
		}
	}
	take(s.Info.RDBLastCOW, "INFO rdb_last_cow_size")
	take(s.Info.AOFLastCOW, "INFO aof_last_cow_size")
	if last != nil {
		take(last.PeakLiveCOW, "the last save's peak current_cow_size (INFO)")
		take(last.PeakCOW, "the last save's peak COW (/proc or INFO, the fastest that read)")
	}
	return best
}

// Limits are the memory limits s lets vkwatch read, in Assess's order, as
// they stand before any fork: each check's Need is its Base and its
// Headroom what a fork may take. A bench keeps them as its runs begin, to
// set each save's measured cost against them afterwards. Nil without
// used_memory.
func Limits(s *source.Sample) []Check {
	used, ok := s.Info.UsedMemory.Get()
	if !ok {
		return nil
	}
	return checks(s, used, 0)
}

// checks projects cow against every limit s lets vkwatch read, in order.
func checks(s *source.Sample, used, cow int64) []Check {
	var out []Check
	add := func(kind LimitKind, limit Figure, base Figure) {
		need := base.Bytes + cow
		c := Check{Limit: kind, Cap: limit, Base: base, Need: need, Headroom: limit.Bytes - need, Level: OK}
		if kind == LimitCgroup {
			c.Cgroup = s.Proc.Cgroup
		}
		switch {
		case need > limit.Bytes:
			c.Level = WouldExceed
		case float64(need) > TightShare*float64(limit.Bytes):
			c.Level = Tight
		}
		out = append(out, c)
	}
	avail, local := s.Proc.HostMemAvailable.Get()
	if local {
		add(LimitMemAvailable, Figure{avail, "/proc/meminfo MemAvailable"}, Figure{})
	}
	limit, ok1 := s.Proc.CgroupLimit.Get()
	usage, ok2 := s.Proc.CgroupUsage.Get()
	if ok1 && ok2 {
		add(LimitCgroup, Figure{limit, "the memory limit of cgroup " + s.Proc.Cgroup},
			Figure{usage, "the memory usage of cgroup " + s.Proc.Cgroup})
	}
	if maxmem, ok := s.Info.MaxMemory.Get(); ok && maxmem > 0 {
		add(LimitMaxMemory, Figure{maxmem, "INFO maxmemory"}, Figure{used, "INFO used_memory"})
	}
	if total, ok := s.Info.TotalSystemMemory.Get(); ok && total > 0 && !local {
		base := Figure{used, "INFO used_memory"}
		if rss, ok := s.Info.RSS.Get(); ok {
			base = Figure{rss, "INFO used_memory_rss"}
		}
		add(LimitSystemMemory, Figure{total, "INFO total_system_memory"}, base)
	}
	return out
}

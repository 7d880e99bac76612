// Package observer measures what watching costs a server: the time its
// main thread spends on vkwatch's own commands. The server knows what each
// command costs it in all (INFO commandstats: calls and microseconds per
// command, every client together); vkwatch knows how many of each it sent.
// Between two readings of commandstats, vkwatch's share of a command's
// time is its share of that command's calls, so
//
//	cost = Σ over vkwatch's commands c of  Δown(c) × Δusec(c) / Δcalls(c)
//
// which is exact when vkwatch is the only client sending c, and an
// average-cost estimate otherwise (another client's INFO all costs more a
// call than vkwatch's INFO of four sections). The cost is known at each
// reading, for the window before it.
//
// Reading commandstats costs too (its INFO is counted under info like any
// other): the watcher reads it rarely, and counts it among its own calls.
package observer

import (
	"strconv"
	"strings"
	"time"
)

// Stat is one command's line of INFO commandstats.
type Stat struct {
	Calls int64
	Usec  int64
}

// Stats are INFO commandstats by command name, lower case, with the
// subcommand after a '|' as the server names it ("config|get" on 7.0 and
// later, "config" before).
type Stats map[string]Stat

// maxCommands bounds what is kept of a commandstats reply: a server has a
// few hundred commands and subcommands; anything past this is not one.
const maxCommands = 2048

// ParseCommandStats reads INFO commandstats lines,
// "cmdstat_ping:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0".
// Other lines are ignored; a line without calls or usec is skipped.
func ParseCommandStats(text string) Stats {
	out := Stats{}
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "cmdstat_")
		if !ok || len(out) >= maxCommands {
			continue
		}
		name, fields, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		var s Stat
		var haveCalls, haveUsec bool
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				continue
			}
			switch k {
			case "calls":
				s.Calls, haveCalls = n, true
			case "usec":
				s.Usec, haveUsec = n, true
			}
		}
		if haveCalls && haveUsec {
			out[strings.ToLower(name)] = s
		}
	}
	return out
}

// Counts are vkwatch's own commands by name, cumulative since the watcher
// began: names as Stats has them, or with a space ("config get") where
// the caller knows the subcommand; a server before 7.0, which keeps one
// line for a command and its subcommands, is matched too.
type Counts map[string]uint64

// lookup finds own command c in st: "config get" as "config|get", else
// as "config".
func (st Stats) lookup(c string) (Stat, bool) {
	key := strings.ReplaceAll(c, " ", "|")
	if s, ok := st[key]; ok {
		return s, true
	}
	if i := strings.IndexByte(key, '|'); i >= 0 {
		s, ok := st[key[:i]]
		return s, ok
	}
	return Stat{}, false
}

// Meter keeps the cost of one server's watching across commandstats
// readings. Use it from one goroutine.
type Meter struct {
	have    bool
	prev    Stats
	prevOwn Counts
	prevAt  time.Duration
	// perCall is each own command's server time a call (seconds) over the
	// latest window.
	perCall map[string]float64
	total   float64 // seconds, up to the latest reading
	share   float64 // seconds a second over the latest window
	window  time.Duration
}

// Observe takes a commandstats reading st made at offset at, when
// vkwatch's own counts were own. restarted says the server restarted
// since the last reading (its counters began again).
func (m *Meter) Observe(st Stats, own Counts, at time.Duration, restarted bool) {
	if m.perCall == nil {
		m.perCall = map[string]float64{}
	}
	first := !m.have || restarted
	var cost float64
	for c, n := range own {
		s, ok := st.lookup(c)
		if !ok {
			continue
		}
		dOwn := n - m.prevOwn[c]
		if n < m.prevOwn[c] {
			dOwn = n
		}
		p, _ := m.prev.lookup(c)
		dCalls, dUsec := s.Calls-p.Calls, s.Usec-p.Usec
		if first || dCalls < 0 || dUsec < 0 {
			// No window yet, or the counters began again (a restart,
			// CONFIG RESETSTAT): the averages since they began.
			dCalls, dUsec = s.Calls, s.Usec
		}
		if dCalls > 0 {
			m.perCall[c] = float64(dUsec) / float64(dCalls) / 1e6
		}
		cost += float64(dOwn) * m.perCall[c]
	}
	m.total += cost
	if !first && at > m.prevAt {
		m.window = at - m.prevAt
		m.share = cost / m.window.Seconds()
	} else {
		m.window, m.share = 0, 0
	}
	m.prev, m.prevOwn, m.prevAt, m.have = st, clone(own), at, true
}

func clone(c Counts) Counts {
	out := make(Counts, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Ready reports whether a reading has been taken: before it, the cost is
// unknown (absent, not zero).
func (m *Meter) Ready() bool { return m.have }

// Seconds is the server time of vkwatch's commands up to the latest
// reading. It moves only at readings, by what the window between them
// cost: never back (a counter), and never a guess at a price to come.
func (m *Meter) Seconds() float64 { return m.total }

// Share is the server time of vkwatch's commands per second over the
// latest window between two readings (a share of one core), and how long
// that window was; ok is false before there is one.
func (m *Meter) Share() (share float64, window time.Duration, ok bool) {
	return m.share, m.window, m.window > 0
}

// PerCall is own command c's server time a call (seconds) over the
// latest window.
func (m *Meter) PerCall(c string) float64 { return m.perCall[c] }

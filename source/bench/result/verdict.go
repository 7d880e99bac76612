package result

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/units"
)

// VerdictKind says what a verdict weighs.
type VerdictKind string

const (
	// Methods: one server saved both ways (bench --methods): a choice of
	// method.
	Methods VerdictKind = "methods"
	// Servers: the servers given, each saving its own way: their costs
	// compared, no choice of method.
	Servers VerdictKind = "servers"
)

// Side is one column of the table as a verdict reads it: a server, or
// one method on one server.
type Side struct {
	Addr   string
	Method string // fork, forkless; "" when its saves were of both or none
	Runs   int
	// Forced counts the runs asked forkless that forked (Run.Forced).
	Forced int
	// COW, Save (observed), WriterOps, WorstPing (ms) and Blocked are the
	// summary's statistics.
	COW, MemDelta, Save, WriterOps, WorstPing, Blocked Stat
	// Peak is the largest memory a save of the column cost: over its
	// runs, the larger of the memory delta and the copy-on-write the
	// server reports (PeakFrom names which). Absent when no run measured
	// either.
	Peak     source.Opt[int64]
	PeakFrom string
	// Binding is the memory limit the column's peak fills most (its
	// base plus the peak against its cap), in the run where it was
	// tightest; Fill is that share of the limit, Share the peak's share
	// of the limit's headroom. Absent without a peak or a limit.
	Binding     source.Opt[Limit]
	Fill, Share float64
}

// Verdict is what a bench's figures say, from those figures only: which
// memory limit binds, the trade in numbers, and (for one server saved
// both ways) the method they support and when that choice flips. Where a
// figure the rule needs is missing, Missing says which and there is no
// choice.
type Verdict struct {
	Kind  VerdictKind
	Sides []Side
	// Memory says, per side, what its saves' peak takes of the binding
	// limit.
	Memory []string
	// Trade is the sides' figures, one entry a side.
	Trade []string
	// Choice is the method the figures support: "fork", "forkless", or
	// "" where they support none (Servers, or a figure missing).
	Choice string
	// Why is the rule's reason, in numbers; Flips the condition under
	// which the choice turns.
	Why, Flips string
	Missing    []string
}

// Decide weighs the summaries of one bench (see README: "The verdict").
//
// For one server saved both ways: fork's peak memory cost is set against
// the limit it fills most (cgroup limit, maxmemory, MemAvailable; for a
// server on another host total_system_memory, which can only say a fork
// does not fit). Memory binds when the peak takes the limit past
// risk.TightShare, where vkwatch's memory check calls a fork tight: then
// forkless. Otherwise the writers decide: fork when its writers' ops/s
// were higher beyond the runs' spread (every fork run above every
// forkless one), else forkless, which then costs the write path nothing
// measured and copies nothing.
func Decide(s []Summary) Verdict {
	v := Verdict{Kind: Servers}
	for i := range s {
		v.Sides = append(v.Sides, sideOf(&s[i]))
	}
	if oneServerBothWays(s) {
		v.Kind = Methods
	}
	for _, sd := range v.Sides {
		v.Memory = append(v.Memory, memoryLine(sd, v.Kind))
	}
	if v.Kind == Methods {
		v.decideMethods()
	} else {
		v.compareServers()
	}
	return v
}

// oneServerBothWays: the summaries are one server's, split by method.
func oneServerBothWays(s []Summary) bool {
	if len(s) == 0 {
		return false
	}
	for _, x := range s {
		if x.Method == "" || x.Addr != s[0].Addr {
			return false
		}
	}
	return true
}

func sideOf(s *Summary) Side {
	sd := Side{Addr: s.Addr, Method: s.Method, Runs: len(s.Runs), COW: s.COW, MemDelta: s.MemDelta, Save: s.SaveTime,
		WriterOps: s.WriterOps, WorstPing: s.WorstPing, Blocked: s.Blocked}
	methods := map[string]bool{}
	for i := range s.Runs {
		r := &s.Runs[i]
		methods[r.Report.Kind.Method()] = true
		if r.Forced() {
			sd.Forced++
		}
		cost, from := runCost(r)
		if !cost.OK {
			continue
		}
		if !sd.Peak.OK || cost.V > sd.Peak.V {
			sd.Peak, sd.PeakFrom = cost, from
		}
	}
	if sd.Method == "" && len(methods) == 1 {
		for m := range methods {
			sd.Method = m
		}
	}
	if !sd.Peak.OK {
		return sd
	}
	// The tightest limit of any run, for the peak of all of them.
	for i := range s.Runs {
		for _, l := range s.Runs[i].Limits {
			if l.Cap.Bytes <= 0 {
				continue
			}
			fill := float64(l.Base.Bytes+sd.Peak.V) / float64(l.Cap.Bytes)
			if !sd.Binding.OK || fill > sd.Fill {
				sd.Binding, sd.Fill = source.Some(l), fill
			}
		}
	}
	if b, ok := sd.Binding.Get(); ok {
		sd.Share = math.Inf(1)
		if h := b.Headroom(); h > 0 {
			sd.Share = float64(sd.Peak.V) / float64(h)
		}
	}
	return sd
}

// runCost is what a run's save cost in memory: the larger of its memory
// delta (RSS rise plus the child's dirty pages, the seed's cgroup) and
// the server's copy-on-write figure, with the instrument's name.
func runCost(r *Run) (source.Opt[int64], string) {
	d, c := r.MemDelta, r.ServerCOW
	switch {
	case d.OK && (!c.OK || d.V >= c.V):
		return d, "memory delta"
	case c.OK:
		return c, "rdb_last_cow_size"
	}
	return source.Opt[int64]{}, ""
}

// memState is whether memory binds a fork: yes, no, or unknown.
type memState int

const (
	memUnknown memState = iota
	memFree
	memBinds
)

// memoryOf says whether memory binds the side's saves, and what is
// missing to say so.
func memoryOf(sd Side) (memState, string) {
	b, ok := sd.Binding.Get()
	switch {
	case !sd.Peak.OK:
		return memUnknown, "the memory a " + orWord(sd.Method, "save") + " save cost (no memory delta, no rdb_last_cow_size)"
	case !ok:
		return memUnknown, "the memory the host has (no cgroup limit, maxmemory, MemAvailable or total_system_memory read)"
	case sd.Fill > risk.TightShare:
		return memBinds, ""
	case b.Kind == risk.LimitSystemMemory:
		return memUnknown, "the memory the host has free: the server is on another host, where total_system_memory " +
			"less RSS is all vkwatch reads, and other processes share it"
	}
	return memFree, ""
}

func orWord(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// memoryLine says what the side's peak takes of its binding limit.
func memoryLine(sd Side, k VerdictKind) string {
	who := sd.Addr
	if k == Methods {
		who = sd.Method
	}
	b, ok := sd.Binding.Get()
	switch {
	case !sd.Peak.OK:
		return who + ": no memory cost measured"
	case !ok:
		return fmt.Sprintf("%s: peak %s (%s); no memory limit read", who, bytesText(sd.Peak.V), sd.PeakFrom)
	}
	state, _ := memoryOf(sd)
	says := map[memState]string{memBinds: "memory binds", memFree: "memory to spare",
		memUnknown: "the host's free memory is not known from here"}[state]
	against := fmt.Sprintf("%s %s", b.Kind, bytesText(b.Cap.Bytes))
	if b.Base.Bytes != 0 {
		against += fmt.Sprintf(" less %s", bytesText(b.Base.Bytes))
	}
	return fmt.Sprintf("%s: peak %s (%s) against %s: %s of the headroom, the limit %.0f%% full with it: %s",
		who, bytesText(sd.Peak.V), sd.PeakFrom, against, pctText(sd.Share), 100*sd.Fill, says)
}

func pctText(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "all"
	case v > 0 && v < 0.005:
		return "under 1%"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

func bytesText(v int64) string { return units.BytesFixed(float64(v)) }

// tradeOf is a side's figures; against, when given, is the side its
// figures are set against (forkless against fork).
func tradeOf(sd Side, against *Side, k VerdictKind) string {
	who := sd.Addr
	if k == Methods {
		who = sd.Method
	}
	var parts []string
	switch {
	case sd.Method == "forkless" && sd.COW.N > 0 && sd.COW.Max == 0:
		c := "no copy-on-write"
		if sd.MemDelta.N > 0 {
			c += ", memory +" + units.BytesFixed(sd.MemDelta.Mean)
		}
		parts = append(parts, c)
	case sd.COW.N > 0:
		c := units.BytesFixed(sd.COW.Mean) + " copy-on-write"
		if sd.Binding.OK {
			c += ", peak " + pctText(sd.Share) + " of headroom"
		}
		parts = append(parts, c)
	default:
		parts = append(parts, "copy-on-write n/a")
	}
	rel := func(x, y Stat, ratio bool) string {
		if against == nil || x.N == 0 || y.N == 0 || y.Mean == 0 {
			return ""
		}
		if ratio {
			return fmt.Sprintf(" (%.1fx)", x.Mean/y.Mean)
		}
		return fmt.Sprintf(" (%+.0f%%)", 100*(x.Mean-y.Mean)/y.Mean)
	}
	var o Stat
	if against != nil {
		o = against.Save
	}
	parts = append(parts, statText(sd.Save, secs)+rel(sd.Save, o, true))
	if against != nil {
		o = against.WriterOps
	}
	parts = append(parts, statText(sd.WriterOps, units.CountFloat)+" writes/s"+rel(sd.WriterOps, o, false))
	if against != nil {
		o = against.WorstPing
	}
	parts = append(parts, "worst PING "+statText(sd.WorstPing, millis)+rel(sd.WorstPing, o, true))
	if sd.Blocked.N > 0 && (sd.Method == "forkless" || sd.Blocked.Max > 0) {
		parts = append(parts, units.CountFloat(sd.Blocked.Max)+" writers blocked at worst")
	}
	if sd.Forced > 0 {
		parts = append(parts, fmt.Sprintf("%d asked forkless and forked", sd.Forced))
	}
	return who + ": " + strings.Join(parts, ", ")
}

func statText(s Stat, f func(float64) string) string {
	if s.N == 0 {
		return "n/a"
	}
	return f(s.Mean)
}

// decideMethods applies the rule to one server saved both ways.
func (v *Verdict) decideMethods() {
	var fork, fl *Side
	for i := range v.Sides {
		switch v.Sides[i].Method {
		case "fork":
			fork = &v.Sides[i]
		case "forkless":
			fl = &v.Sides[i]
		}
	}
	if fork != nil {
		v.Trade = append(v.Trade, tradeOf(*fork, nil, Methods))
	}
	if fl != nil {
		v.Trade = append(v.Trade, tradeOf(*fl, fork, Methods))
	}
	switch {
	case fl == nil && fork != nil && fork.Forced > 0:
		v.Missing = append(v.Missing, fmt.Sprintf("a forkless save: the %d runs asked forkless all forked "+
			"(rdb_current_bgsave_type fork: a loaded module cannot save forklessly)", fork.Forced))
	case fl == nil:
		v.Missing = append(v.Missing, "a forkless save")
	}
	if fork == nil {
		v.Missing = append(v.Missing, "a fork save")
	}
	if fork == nil || fl == nil {
		v.Why = "one method measured: no choice between them"
		return
	}
	mem, missing := memoryOf(*fork)
	faster := fasterOf(fork.WriterOps, fl.WriterOps)
	b := fork.Binding.V
	need := func() string { // the limit at which fork's peak fills it to TightShare
		return bytesText(int64(math.Ceil(float64(b.Base.Bytes+fork.Peak.V) / risk.TightShare)))
	}
	switch {
	case mem == memBinds:
		v.Choice = "forkless"
		v.Why = fmt.Sprintf("memory binds: fork's peak %s takes %s to %.0f%% of its limit, past %.0f%%",
			bytesText(fork.Peak.V), b.Kind, 100*fork.Fill, 100*risk.TightShare)
		if faster == "fork" {
			v.Why += fmt.Sprintf(", though fork's writers did %s more writes a second", relText(fork.WriterOps, fl.WriterOps))
		}
		v.Flips = fmt.Sprintf("fork once %s is at least %s with the same peak (%s there now)", b.Kind, need(), bytesText(b.Cap.Bytes))
	case faster != "fork":
		v.Choice = "forkless"
		if faster == "forkless" {
			v.Why = fmt.Sprintf("forkless's writers did %s more writes a second, beyond the runs' spread, and it copies nothing",
				relText(fl.WriterOps, fork.WriterOps))
		} else {
			v.Why = "the writers' ops/s of the two are within the runs' spread, and forkless copies nothing"
		}
		v.Flips = "fork if its writers' ops/s measure above every forkless run's while its peak stays within " +
			fmt.Sprintf("%.0f%% of the binding limit", 100*risk.TightShare)
	case mem == memFree:
		v.Choice = "fork"
		v.Why = fmt.Sprintf("memory to spare (fork's peak %s takes %s to %.0f%%), and fork's writers did %s more writes a second, beyond the runs' spread",
			bytesText(fork.Peak.V), b.Kind, 100*fork.Fill, relText(fork.WriterOps, fl.WriterOps))
		v.Flips = fmt.Sprintf("forkless once %s falls below %s (%s now), or fork's peak grows past %s",
			b.Kind, need(), bytesText(b.Cap.Bytes), bytesText(int64(risk.TightShare*float64(b.Cap.Bytes))-b.Base.Bytes))
	default:
		v.Missing = append(v.Missing, missing)
		v.Why = fmt.Sprintf("fork's writers did %s more writes a second, but whether memory binds is not known", relText(fork.WriterOps, fl.WriterOps))
	}
}

// fasterOf says whose writers were faster beyond the runs' spread:
// "fork", "forkless", or "" when the two ranges overlap.
func fasterOf(fork, fl Stat) string {
	switch {
	case fork.N == 0 || fl.N == 0:
	case fork.Min > fl.Max:
		return "fork"
	case fl.Min > fork.Max:
		return "forkless"
	}
	return ""
}

// relText is how much more a's mean is than b's: "18%".
func relText(a, b Stat) string {
	if b.Mean == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*(a.Mean-b.Mean)/b.Mean)
}

// compareServers sets the servers' figures side by side: which cost
// least of each, and why no method is chosen.
func (v *Verdict) compareServers() {
	for _, sd := range v.Sides {
		v.Trade = append(v.Trade, tradeOf(sd, nil, Servers))
	}
	methods := map[string]bool{}
	for _, sd := range v.Sides {
		methods[sd.Method] = true
	}
	switch {
	case len(v.Sides) == 0:
		v.Why = "no server measured"
		return
	case len(methods) > 1:
		v.Why = "fork and forkless were measured on different servers, so their differences are the servers' too: " +
			"for a choice of method, bench one server with --methods fork,forkless"
	default:
		m := ""
		for k := range methods {
			m = k
		}
		v.Why = fmt.Sprintf("only %s was measured: no choice of method", orWord(m, "one method"))
	}
	if len(v.Sides) < 2 {
		return
	}
	best := []struct {
		what string
		get  func(Side) Stat
		low  bool
	}{
		{"least memory", memoryStat, true},
		{"shortest save", func(s Side) Stat { return s.Save }, true},
		{"most writes/s", func(s Side) Stat { return s.WriterOps }, false},
		{"lowest worst PING", func(s Side) Stat { return s.WorstPing }, true},
	}
	var parts []string
	for _, b := range best {
		var stats []Stat
		for _, sd := range v.Sides {
			if st := b.get(sd); st.N > 0 {
				stats = append(stats, st)
			}
		}
		if len(stats) < 2 {
			v.Missing = append(v.Missing, b.what+": fewer than two servers measured it")
			continue
		}
		parts = append(parts, b.what+": "+bestOf(v.Sides, b.get, b.low))
	}
	if len(parts) > 0 {
		v.Why = strings.Join(parts, "; ") + ". " + upperFirst(v.Why)
	}
}

// inert is v with every string made inert: addresses and instruments
// come from the servers, the host and files.
func (v Verdict) inert() Verdict {
	texts := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = inert.Text(s)
		}
		return out
	}
	v.Memory, v.Trade, v.Missing = texts(v.Memory), texts(v.Trade), texts(v.Missing)
	v.Choice, v.Why, v.Flips = inert.Text(v.Choice), inert.Text(v.Why), inert.Text(v.Flips)
	sides := make([]Side, len(v.Sides))
	for i, sd := range v.Sides {
		sd.Addr, sd.Method, sd.PeakFrom = inert.Text(sd.Addr), inert.Text(sd.Method), inert.Text(sd.PeakFrom)
		if b, ok := sd.Binding.Get(); ok {
			sd.Binding = source.Some(inertLimits([]Limit{b})[0])
		}
		sides[i] = sd
	}
	v.Sides = sides
	return v
}

// upperFirst starts s with a capital, for a sentence after another.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// memoryStat is what a side's saves cost in memory, run by run: the
// memory delta where it was measured, else the copy-on-write.
func memoryStat(s Side) Stat {
	if s.MemDelta.N > 0 {
		return s.MemDelta
	}
	return s.COW
}

// bestOf names the side whose runs all did better than every other
// side's (lower, or higher without low): a range that overlaps another is
// no measured difference, and none is named then.
func bestOf(sides []Side, get func(Side) Stat, low bool) string {
	for i, sd := range sides {
		a := get(sd)
		if a.N == 0 {
			continue
		}
		beats := true
		for j, o := range sides {
			b := get(o)
			if j == i || b.N == 0 {
				continue
			}
			if low && a.Max >= b.Min || !low && a.Min <= b.Max {
				beats = false
				break
			}
		}
		if beats {
			return sd.Addr
		}
	}
	return "alike within the runs' spread"
}

package page

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/vkwatch/vkwatch/source"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/source/units"
)

// serverSum is a server's row of the summary: its saves, and the worst of
// each cost over them, each with the save it belongs to.
type serverSum struct {
	Server, Colour, Identity string
	Saves                    string
	COW                      worst // rdb_last_cow_size, aof_last_cow_size
	Footprint                worst // PeakFootprintDelta
	ForkPause                worst // latest_fork_usec
	Ping                     worst // PingDuring's worst
	PingBefore               cell  // PingBefore's worst, of Ping's save
	Blocked                  worst // writers a forkless save blocked
	OpsDrop                  worst // OpsDuring / OpsBefore, the lowest

	saves []src.Save
}

// worst is the worst value of a cost over a server's saves: shown, and
// the number of the save it belongs to (0: no save measured it).
type worst struct {
	cell
	Save int
	v    float64
	sv   *src.Save
}

// measure reads a cost of a save, ok false where nothing measured it.
type measure func(*src.Save) (float64, bool)

func fromOpt[T int64 | float64](o func(*src.Save) source.Opt[T]) measure {
	return func(sv *src.Save) (float64, bool) {
		v, ok := o(sv).Get()
		return float64(v), ok
	}
}

var (
	cowOf       = fromOpt(func(sv *src.Save) source.Opt[int64] { return sv.COW })
	footprintOf = fromOpt(func(sv *src.Save) source.Opt[int64] { return sv.PeakFootprintDelta })
	pauseOf     = func(sv *src.Save) (float64, bool) {
		d, ok := sv.ForkPause.Get()
		return float64(d) / 1e6, ok
	}
	pingOf = func(sv *src.Save) (float64, bool) {
		l := sv.PingDuring
		return float64(l.Worst()) / 1e6, l.Count > 0 || l.InFlight > 0
	}
	// opsShareOf is the ops/s during a save as a share of those before it.
	opsShareOf = func(sv *src.Save) (float64, bool) {
		b, okb := sv.OpsBefore.Get()
		d, okd := sv.OpsDuring.Get()
		return d / b, okb && okd && b > 0
	}
)

// cowInstrument names the field a save's COW was read from.
func cowInstrument(sv *src.Save) string {
	if sv.COWFrom != "" {
		return string(sv.COWFrom)
	}
	if sv.Kind == source.SaveAOF {
		return "aof_last_cow_size"
	}
	return "rdb_last_cow_size"
}

// blockedWriters is how many writers a save held up at its worst
// (SaveReport.BlockedWriters: blocked_clients above its level outside the
// save); absent where no sample during it read blocked_clients.
func blockedWriters(sv *src.Save) (float64, bool) {
	v, ok := sv.BlockedWriters().Get()
	return float64(v), ok
}

// worstOf is the highest (or, lowest, the lowest) value of m over saves,
// numbered from first, shown by f.
func worstOf(saves []src.Save, first int, m measure, f func(float64) cell, lowest bool) worst {
	w := worst{cell: na}
	for i := range saves {
		v, ok := m(&saves[i])
		if !ok || math.IsNaN(v) {
			continue
		}
		if w.Save == 0 || !lowest && v > w.v || lowest && v < w.v {
			w = worst{cell: f(v), Save: first + i, v: v, sv: &saves[i]}
		}
	}
	return w
}

func fpct(v float64) cell { return cell{fmt.Sprintf("%.0f %%", v*100), fmt.Sprint(v)} }

// summarise is server s's row of the summary; its saves are numbered from
// first.
func summarise(name, colour string, s *src.Server, first int) serverSum {
	sum := serverSum{Server: name, Colour: colour, Identity: identityText(s), Saves: savesText(s.Saves, true), saves: s.Saves}
	sum.COW = worstOf(s.Saves, first, cowOf, fbytes, false)
	if sv := sum.COW.sv; sv != nil {
		sum.COW.cell = cowCell(&sv.SaveReport) // none (no child) for a forkless save
	}
	sum.Footprint = worstOf(s.Saves, first, footprintOf, fbytes, false)
	sum.ForkPause = worstOf(s.Saves, first, pauseOf, fms, false)
	sum.Ping = worstOf(s.Saves, first, pingOf, fms, false)
	sum.PingBefore = na
	if sv := sum.Ping.sv; sv != nil && (sv.PingBefore.Count > 0 || sv.PingBefore.InFlight > 0) {
		sum.PingBefore = latencyMs(sv.PingBefore.Worst())
	}
	sum.Blocked = worstOf(s.Saves, first, blockedWriters, fcount, false)
	sum.OpsDrop = worstOf(s.Saves, first, opsShareOf, fpct, true)
	return sum
}

// identityText is what the server said it is: "redis 7.0.15, master".
func identityText(s *src.Server) string {
	id := s.Identity
	if id == nil {
		return "n/a"
	}
	name := id.ServerName
	if name == "" {
		name = "server"
	}
	out := name + " " + orNA(id.Version)
	if id.Role != "" {
		out += ", " + id.Role
	}
	return clean(out)
}

// savesText counts a server's saves by kind and by status: "2 BGSAVE
// fork, all ok", or "2 BGSAVE fork, 1 AOF rewrite; 2 ok, 1 err"; without
// the count where there is one kind and withCount is false ("BGSAVE fork,
// all ok").
func savesText(saves []src.Save, withCount bool) string {
	if len(saves) == 0 {
		return "none"
	}
	kinds := counts(saves, func(sv *src.Save) string { return orNA(string(sv.Kind)) })
	statuses := counts(saves, func(sv *src.Save) string { return orNA(sv.Status) })
	out := countsText(kinds)
	if !withCount && len(kinds) == 1 {
		out = kinds[0].name
	}
	switch {
	case len(statuses) == 1 && len(saves) == 1:
		out += ", " + statuses[0].name
	case len(statuses) == 1:
		out += ", all " + statuses[0].name
	default:
		out += "; " + countsText(statuses)
	}
	return clean(out)
}

type counted struct {
	name string
	n    int
}

// counts counts saves by key, most first, then by name.
func counts(saves []src.Save, key func(*src.Save) string) []counted {
	m := map[string]int{}
	for i := range saves {
		m[key(&saves[i])]++
	}
	out := make([]counted, 0, len(m))
	for k, n := range m {
		out = append(out, counted{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].n > out[j].n || out[i].n == out[j].n && out[i].name < out[j].name
	})
	return out
}

func countsText(cs []counted) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%d %s", c.n, c.name)
	}
	return strings.Join(parts, ", ")
}

// pageWorst is the worst of one cost over every server of a recording:
// the row it is in, or nil.
func pageWorst(sums []serverSum, get func(*serverSum) worst, lowest bool) (*serverSum, worst) {
	var at *serverSum
	var w worst
	for i := range sums {
		c := get(&sums[i])
		if c.Save == 0 {
			continue
		}
		if at == nil || !lowest && c.v > w.v || lowest && c.v < w.v {
			at, w = &sums[i], c
		}
	}
	return at, w
}

// recordingStory is the summary of a recording in sentences: what was
// watched and what the saves cost at worst, each figure with the save it
// belongs to and its instrument.
func recordingStory(sums []serverSum, dur float64) []string {
	all, who := savesOf(sums)
	s := []string{fmt.Sprintf("vkwatch watched %s for %s", who, durText(seconds(dur)))}
	if len(all) == 0 {
		s[0] += " and saw no save end: the figures show the servers without one."
		return s
	}
	s[0] += fmt.Sprintf(" and saw %s end: %s.", plural(len(all), "save"), savesText(all, false))
	return append(s, costStory(sums)...)
}

// reportsStory is the summary of --report's save reports in sentences:
// whose saves they are, and what the saves cost at worst.
func reportsStory(sums []serverSum) []string {
	all, who := savesOf(sums)
	if len(all) == 0 {
		return []string{"The file holds no save report: vkwatch saw no save end while it ran."}
	}
	s := []string{fmt.Sprintf("The save reports (--report) hold %s on %s: %s.", plural(len(all), "save"), who, savesText(all, false))}
	return append(s, costStory(sums)...)
}

// savesOf is every save of sums, and the servers named as a sentence
// names them ("a, b and c", or "5 servers").
func savesOf(sums []serverSum) ([]src.Save, string) {
	var all []src.Save
	var names []string
	for i := range sums {
		all = append(all, sums[i].saves...)
		names = append(names, sums[i].Server)
	}
	who := plural(len(sums), "server")
	if len(sums) <= 3 {
		who = joinAnd(names)
	}
	return all, who
}

// costStory is what the saves of sums cost at worst, in sentences, each
// figure with the save it belongs to and its instrument.
func costStory(sums []serverSum) []string {
	var s []string
	if at, w := pageWorst(sums, func(x *serverSum) worst { return x.COW }, false); at != nil && w.sv.COWFrom == source.FromNoChild {
		s = append(s, "Nothing was copied on write: a forkless save forks no child.")
	} else if at != nil {
		t := fmt.Sprintf("The most a save copied on write was %s (save #%d on %s, the server's %s)", w.Text, w.Save, at.Server, cowInstrument(w.sv))
		if base, ok := w.sv.BaseUsed.Get(); ok && base > 0 {
			t += fmt.Sprintf(", %.0f %% of the %s of used_memory before it", w.v/float64(base)*100, units.BytesFixed(float64(base)))
		}
		s = append(s, t+".")
	}
	if at, w := pageWorst(sums, func(x *serverSum) worst { return x.Footprint }, false); at != nil {
		s = append(s, fmt.Sprintf("The host's footprint (RSS and the child's copied pages) rose by at most %s (save #%d on %s).", w.Text, w.Save, at.Server))
	}
	if at, w := pageWorst(sums, func(x *serverSum) worst { return x.ForkPause }, false); at != nil {
		s = append(s, fmt.Sprintf("The fork itself stopped the server's main thread for at most %s (save #%d on %s, latest_fork_usec).", w.Text, w.Save, at.Server))
	}
	if at, w := pageWorst(sums, func(x *serverSum) worst { return x.Ping }, false); at != nil {
		t := fmt.Sprintf("The worst PING during a save took %s (save #%d on %s)", w.Text, w.Save, at.Server)
		if sp := w.sv.WorstSpike; sp != nil && sp.Ping == w.sv.PingDuring.Worst() {
			t += ": " + clean(sp.Summary())
		}
		if at.PingBefore.Raw != "" {
			t += fmt.Sprintf(", against %s at worst just before it", at.PingBefore.Text)
		}
		s = append(s, t+".")
	}
	if at, w := pageWorst(sums, func(x *serverSum) worst { return x.Blocked }, false); at != nil && w.v > 0 {
		s = append(s, fmt.Sprintf("A save held up to %s writers (save #%d on %s: blocked_clients above its level before the save).", w.Text, w.Save, at.Server))
	}
	if at, w := pageWorst(sums, func(x *serverSum) worst { return x.OpsDrop }, true); at != nil && w.v < 1 {
		b, _ := w.sv.OpsBefore.Get()
		d, _ := w.sv.OpsDuring.Get()
		s = append(s, fmt.Sprintf("Throughput fell by up to %.0f %% during a save (save #%d on %s: %s ops/s against %s before).",
			(1-w.v)*100, w.Save, at.Server, units.CountFloat(d), units.CountFloat(b)))
	}
	return s
}

// joinAnd joins names as a sentence lists them: "a, b and c".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return "no server"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

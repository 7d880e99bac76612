package page

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source/bench/result"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/source/units"
)

// benchView is a bench's results: the seed article's table, a column per
// server (fork against forkless), a row per measure; and every run.
type benchView struct {
	Heads   []benchHead
	Rows    []benchRow
	Runs    []benchRunRow
	Verdict verdictView
	// causes says, per server, what the runs' worst PINGs were spikes
	// of (result.WorstCauses); "" when none was.
	causes string
}

// verdictView is the bench's verdict (result.Decide) as the page shows
// it under the seeds' table: a label and a line each, as bench prints it.
type verdictView struct {
	Title  string
	Choice string // the method chosen, "none" without one
	Lines  []verdictLine
}

type verdictLine struct {
	Part, Label, Text string
}

// verdictOf lays out v; the texts are the servers' and a file's: made
// inert and bounded.
func verdictOf(v result.Verdict) verdictView {
	vv := verdictView{Title: "Verdict: the servers compared", Choice: clean(orWord(v.Choice, "none"))}
	if v.Kind == result.Methods {
		vv.Title = "Verdict: which method for this server"
	}
	add := func(part, label string, texts ...string) {
		for i, t := range texts {
			if i > 0 {
				label = ""
			}
			vv.Lines = append(vv.Lines, verdictLine{part, label, clean(t)})
		}
	}
	add("memory", "memory", v.Memory...)
	add("trade", "trade", v.Trade...)
	add("choice", "choice", orWord(v.Choice, "none")+": "+v.Why)
	if v.Flips != "" {
		add("flips", "flips to", v.Flips)
	}
	add("missing", "missing", v.Missing...)
	return vv
}

func orWord(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

type benchHead struct {
	Server, Label, Kind, Colour string
	Runs                        int
}

type benchRow struct {
	ID, Name, Instrument string
	Cells                []statCell
}

// statCell is a measure over a server's runs: the mean, and the range
// below it.
type statCell struct {
	Mean  cell
	Range cell
}

type benchRunRow struct {
	Server                      string
	Run                         int
	Kind, Status                string
	COW, ServerCOW, MemDelta    cell
	Save, ServerSec, WriterOps  cell
	WorstPing, P99Ping, Dataset cell
}

// benchMeasures are the seed's table's rows, in its order: both memory
// instruments first, side by side, as the seed article put them.
var benchMeasures = []struct {
	id, name, instrument string
	get                  func(result.Summary) result.Stat
	f                    func(float64) cell
}{
	{"cow", "copy-on-write", "rdb_last_cow_size; forkless: none, no child", func(s result.Summary) result.Stat { return s.COW }, fbytes},
	{"mem-delta", "memory delta during the save", "RSS above its level before, plus the child's dirty pages", func(s result.Summary) result.Stat { return s.MemDelta }, fbytes},
	{"save-time", "save time", "observed by sampling", func(s result.Summary) result.Stat { return s.SaveTime }, fsecs},
	{"server-time", "save time", "rdb_last_bgsave_time_sec", func(s result.Summary) result.Stat { return s.ServerTime }, fsecs},
	{"writer-ops", "writers' ops/s", "over the window", func(s result.Summary) result.Stat { return s.WriterOps }, fcount},
	{"worst-ping", "worst PING", "over the window", func(s result.Summary) result.Stat { return s.WorstPing }, fms},
	{"p99-ping", "p99 PING", "estimated from each interval's", func(s result.Summary) result.Stat { return s.P99Ping }, fms},
	{"blocked", "writers blocked", "blocked_clients at the save's peak, less before", func(s result.Summary) result.Stat { return s.Blocked }, fcount},
}

// BenchMeasures names the rows of the seed's table (for tests and docs).
func BenchMeasures() []string {
	out := make([]string, len(benchMeasures))
	for i, m := range benchMeasures {
		out[i] = m.name
	}
	return out
}

func fbytes(v float64) cell { return cell{units.BytesFixed(v), strconv.FormatFloat(v, 'f', -1, 64)} }
func fsecs(v float64) cell {
	return cell{strconv.FormatFloat(v, 'f', 2, 64) + " s", strconv.FormatFloat(v, 'f', -1, 64)}
}
func fcount(v float64) cell { return cell{units.CountFloat(v), strconv.FormatFloat(v, 'f', -1, 64)} }
func fms(v float64) cell    { return cell{msText(v), strconv.FormatFloat(v, 'f', -1, 64)} }

// benchViewOf lays out file fi of ins, a bench: a column per server, a
// row per measure, and a row per run.
func benchViewOf(ins []src.Input, fi int, colourOf map[string]int) *benchView {
	bv := &benchView{}
	var causes []string
	sums := ins[fi].Bench
	for _, s := range sums {
		ci := benchColour(colourOf, ins, fi, s.Addr)
		bv.Heads = append(bv.Heads, benchHead{Server: clean(s.Addr), Label: clean(s.Label), Kind: clean(orNA(s.Kind)),
			Colour: hex(serverColour(ci)), Runs: len(s.Runs)})
		for i, run := range s.Runs {
			bv.Runs = append(bv.Runs, benchRunOf(s, cmp.Or(run.N, i+1), run))
		}
		if c := result.WorstCauses(s); c != "" && !strings.HasPrefix(c, "no spike") {
			causes = append(causes, clean(c)+" on "+clean(s.Addr))
		}
	}
	bv.causes = strings.Join(causes, "; ")
	for _, m := range benchMeasures {
		row := benchRow{ID: m.id, Name: m.name, Instrument: m.instrument}
		for _, s := range sums {
			row.Cells = append(row.Cells, statOf(m.get(s), len(s.Runs), m.f))
		}
		bv.Rows = append(bv.Rows, row)
	}
	bv.Verdict = verdictOf(result.Decide(sums))
	return bv
}

// statOf is a measure's cell: its mean, and its range over the runs that
// measured it.
func statOf(st result.Stat, runs int, f func(float64) cell) statCell {
	if st.N == 0 {
		return statCell{na, cell{}}
	}
	lo, hi := f(st.Min), f(st.Max)
	rng := cell{lo.Text + " – " + hi.Text, lo.Raw + "," + hi.Raw}
	if st.N != runs {
		rng.Text += fmt.Sprintf(" (%d of %d runs)", st.N, runs)
	}
	return statCell{f(st.Mean), rng}
}

func benchRunOf(s result.Summary, n int, r result.Run) benchRunRow {
	return benchRunRow{
		Server: clean(s.Addr), Run: n, Kind: clean(orNA(string(r.Report.Kind))), Status: clean(orNA(r.Report.Status)),
		COW: cowCell(&r.Report), ServerCOW: bytesCell(r.ServerCOW), MemDelta: bytesCell(r.MemDelta),
		Save: secsCell(r.Report.Observed), ServerSec: optSecsCell(r.ServerSeconds),
		WriterOps: fcount(r.WriterOps), WorstPing: latencyMs(r.WorstPing), P99Ping: latencyMs(r.P99Ping),
		Dataset: cell{units.CountFloat(float64(r.DatasetKeys)), strconv.FormatInt(r.DatasetKeys, 10)},
	}
}

// benchStory is a bench in sentences: what ran, then, for two servers,
// how the second's means differ from the first's.
func benchStory(bv *benchView) []string {
	if len(bv.Heads) == 0 {
		return []string{"The bench's results hold no server."}
	}
	names := make([]string, len(bv.Heads))
	for i, h := range bv.Heads {
		names[i] = fmt.Sprintf("%s (%s, %s)", h.Server, h.Kind, plural(h.Runs, "run"))
	}
	s := []string{"bench saved " + joinAnd(names) + " under the same write load; the table gives each measure's mean over the runs, its range below."}
	if c := bv.causes; c != "" {
		s = append(s, "The runs' worst PINGs were spikes of "+c+".")
	}
	if len(bv.Heads) == 2 {
		if t := compareText(bv); t != "" {
			s = append(s, t)
		}
	}
	return s
}

// compareText says how the second server's means differ from the first's.
func compareText(bv *benchView) string {
	var parts []string
	for _, r := range bv.Rows {
		x, errA := strconv.ParseFloat(r.Cells[0].Mean.Raw, 64)
		y, errB := strconv.ParseFloat(r.Cells[1].Mean.Raw, 64)
		switch {
		case errA != nil || errB != nil:
			continue
		case x == 0 && y == 0 || x != 0 && math.Abs(y-x)/x < 0.005:
			parts = append(parts, r.Name+" the same")
		case x == 0:
			parts = append(parts, r.Name+" "+r.Cells[1].Mean.Text+" against none")
		case y < x:
			parts = append(parts, fmt.Sprintf("%s %.0f %% lower", r.Name, (x-y)/x*100))
		default:
			parts = append(parts, fmt.Sprintf("%s %.0f %% higher", r.Name, (y-x)/x*100))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	a, b := bv.Heads[0], bv.Heads[1]
	return fmt.Sprintf("%s (%s) against %s (%s): %s.", b.Server, b.Kind, a.Server, a.Kind, joinAnd(parts))
}

// Package page draws vkwatch report's page: the figures of recordings
// and benches (gonum.org/v1/plot, as SVG inline and as files) and one
// self-contained HTML page (html/template) that leads with the story, a
// summary in sentences and one table, then the figures, then every save
// and run. What it draws comes from source/report; it reads no file itself.
package page

import (
	"fmt"
	"image/color"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	src "github.com/vkwatch/vkwatch/source/report"
)

// Page is a built page: its figures, drawn once, and its data.
type Page struct {
	// Lead says what the page is about in a line under its title.
	Lead  string
	Files []*fileView
	// Costs are the cost curves of every save with enough points to
	// draw one; CostNote names the saves left out and why.
	Costs    []*Figure
	CostNote string
	Saves    []saveRow
	// Figures lists every figure in page order (for --figures).
	Figures []*Figure
}

// fileView is one file of the page: a recording or a bench's results.
type fileView struct {
	Num      int // from 1, in the order given
	Path     string
	Kind     string // "recording" or "bench"
	Recorded string // when, in words
	VKWatch  string
	Settings []setting
	// Story is the summary in sentences.
	Story []string
	// A recording's summary table (a row per server) and its figures (a
	// row per kind: memory, ops/s, PING).
	Servers []serverSum
	Rows    []figureRow
	// A bench's table of its servers against each other, and its runs.
	Bench *benchView
}

type setting struct{ Name, Value string }

// AnySave says whether any server of a recording saw a save: without one
// the summary's table would hold nothing but n/a, and the sentence says so.
func (f *fileView) AnySave() bool {
	for _, s := range f.Servers {
		if len(s.saves) > 0 {
			return true
		}
	}
	return false
}

// figureRow is a kind of figure for every server of a recording, side by
// side on the same scales.
type figureRow struct {
	Title   string
	Figures []*Figure
}

// Build draws the figures of ins and lays out the page's data.
func Build(ins []src.Input) (*Page, error) {
	r := &Page{}
	sc := pageScales(ins)
	colourOf := map[string]int{}
	var curves []saveCurve
	for fi, in := range ins {
		fv := &fileView{Num: fi + 1, Path: clean(in.Path)}
		switch {
		case in.Recording != nil:
			curves = append(curves, r.addRecording(fv, ins, fi, colourOf, sc)...)
		default:
			fv.Kind = "bench"
			fv.Bench = benchViewOf(ins, fi, colourOf)
			fv.Story = benchStory(fv.Bench)
		}
		r.Files = append(r.Files, fv)
	}
	r.Lead = leadText(ins)
	drawn, left := withCurves(curves)
	if len(drawn) > 0 {
		r.Costs = costFigures(drawn)
		r.Figures = append(r.Figures, r.Costs...)
	}
	r.CostNote = costNote(left)
	return r, nil
}

// leadText is the line under the page's title: what was watched, when.
// A bench's runs are the saves of its recording when both are on the
// page, and a server is counted once by its address.
func leadText(ins []src.Input) string {
	addrs := map[string]bool{}
	var recSaves, runs int
	var first, last time.Time
	recs := false
	for _, in := range ins {
		for _, s := range in.Bench {
			addrs[s.Addr] = true
			runs += len(s.Runs)
		}
		rec := in.Recording
		if rec == nil {
			continue
		}
		recs = true
		if len(rec.Servers) == 0 {
			continue // --report's file of no save: no time to show
		}
		start := rec.Epoch
		if rec.SavesOnly {
			start = start.Add(firstSave(rec))
		}
		if first.IsZero() || start.Before(first) {
			first = start
		}
		for _, s := range rec.Servers {
			addrs[s.Addr] = true
			recSaves += len(s.Saves)
			if end := rec.Epoch.Add(seconds(s.Duration())); end.After(last) {
				last = end
			}
		}
	}
	saves := plural(recSaves, "save")
	if !recs {
		saves = plural(runs, "bench run")
	}
	if strings.HasPrefix(saves, "0 ") {
		saves = "no " + saves[2:len(saves)-1]
	}
	out := plural(len(addrs), "server") + ", " + saves
	if !first.IsZero() {
		out += ", " + spanText(first, last)
	}
	return out + "."
}

// spanText is a time span in words: "4 Dec 2026, 17:20:52 – 17:21:58 UTC
// (1 min 6 s)".
func spanText(from, to time.Time) string {
	zone := zoneName(from)
	end := to.Format("15:04:05")
	if !sameDay(from, to) {
		end = to.Format("2 Jan 2006, 15:04:05")
	}
	return from.Format("2 Jan 2006, 15:04:05") + " – " + end + " " + zone + " (" + durText(to.Sub(from)) + ")"
}

// durText is a duration as a reader says it: "48 s", "1 min 6 s", "2 h 5 min".
func durText(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + " s"
	case s < 3600:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// saveCurve is a save of the page for the cost figures: its number, its
// server's colour and name.
type saveCurve struct {
	save   *src.Save
	num    int
	colour int
	name   string
}

// addRecording lays out file fi of ins, a recording, in fv: its summary,
// a row of figures per kind (added to r's), its saves added to r's table.
// It returns the saves for the cost figures.
func (r *Page) addRecording(fv *fileView, ins []src.Input, fi int, colourOf map[string]int, sc scales) []saveCurve {
	rec := ins[fi].Recording
	fv.Kind = "recording"
	fv.VKWatch = clean(orNA(rec.VKWatch))
	fv.Settings = settingsOf(rec.Settings)
	tx := timeAxis{clock: clockTicks{epoch: rec.Epoch}}
	for _, s := range rec.Servers {
		tx.hi = max(tx.hi, s.Duration())
	}
	fv.Recorded = spanText(rec.Epoch, rec.Epoch.Add(seconds(tx.hi)))
	switch {
	case rec.SavesOnly && len(rec.Servers) == 0:
		fv.Kind, fv.Recorded = "save reports", "no save"
	case rec.SavesOnly:
		// --report's saves: no sample to draw over time, and the span is
		// the saves', from the first one's start.
		fv.Kind = "save reports"
		fv.Recorded = spanText(rec.Epoch.Add(firstSave(rec)), rec.Epoch.Add(seconds(tx.hi)))
	default:
		fv.Rows = make([]figureRow, len(timeKinds))
		for i, k := range timeKinds {
			fv.Rows[i].Title = k.title
		}
	}
	var curves []saveCurve
	var sums []serverSum
	for _, s := range rec.Servers {
		ci := colourIndex(colourOf, fi, string(s.Node))
		name := serverName(ins, fi, s.Addr)
		colour := hex(serverColour(ci))
		first := len(r.Saves) + 1
		sp := &spans{}
		for i := range s.Saves {
			sv := &s.Saves[i]
			num := len(r.Saves) + 1
			r.Saves = append(r.Saves, saveRowOf(num, s, sv, colour, rec.Epoch))
			sp.saves = append(sp.saves, *sv)
			sp.labels = append(sp.labels, clean(fmt.Sprintf("#%d %s", num, orNA(string(sv.Kind)))))
			sp.short = append(sp.short, "#"+strconv.Itoa(num))
			curves = append(curves, saveCurve{sv, num, ci, name})
		}
		stem := fmt.Sprintf("%02d-%s", len(r.Figures)/len(timeKinds)+1, safeName(s.Addr))
		for i, k := range timeKinds[:len(fv.Rows)] {
			f := k.figure(stem, clean(s.Addr), s, serverColour(ci), tx, sc, sp)
			f.Colour = colour
			fv.Rows[i].Figures = append(fv.Rows[i].Figures, f)
			r.Figures = append(r.Figures, f)
		}
		sums = append(sums, summarise(clean(s.Addr), colour, s, first))
	}
	fv.Servers = sums
	if rec.SavesOnly {
		fv.Story = reportsStory(sums)
	} else {
		fv.Story = recordingStory(sums, tx.hi)
	}
	return curves
}

// firstSave is when the first save of rec began, from its epoch.
func firstSave(rec *src.Recording) time.Duration {
	first, seen := time.Duration(0), false
	for _, s := range rec.Servers {
		for _, sv := range s.Saves {
			if !seen || sv.Started < first {
				first, seen = sv.Started, true
			}
		}
	}
	return first
}

// colourIndex gives each server of the page its own colour, in order of
// appearance; a bench's server and a recording's of the same file and
// address share one.
func colourIndex(m map[string]int, file int, key string) int {
	k := strconv.Itoa(file) + "\x00" + key
	if i, ok := m[k]; ok {
		return i
	}
	m[k] = len(m)
	return m[k]
}

// benchColour is the colour of a bench's server: that of the same address
// in a recording on the page (the bench's own --record, most likely), else
// one of its own.
func benchColour(m map[string]int, ins []src.Input, file int, addr string) int {
	for fi, in := range ins {
		if in.Recording == nil {
			continue
		}
		for _, s := range in.Recording.Servers {
			if s.Addr == addr {
				return colourIndex(m, fi, string(s.Node))
			}
		}
	}
	return colourIndex(m, file, addr)
}

// serverName names a server in the cost figures' keys: its address, and
// the file's name when the page compares several recordings (within a
// file's own sections its address says it).
func serverName(ins []src.Input, file int, addr string) string {
	n := 0
	for _, in := range ins {
		if in.Recording != nil {
			n++
		}
	}
	if n <= 1 {
		return clean(addr)
	}
	return clean(addr) + " (" + clean(filepath.Base(ins[file].Path)) + ")"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// settingsOf is a recording's settings, sorted by name, each bounded.
func settingsOf(m map[string]string) []setting {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]setting, 0, len(keys))
	for _, k := range keys {
		out = append(out, setting{clean(k), clean(m[k])})
	}
	return out
}

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// safeName makes an address fit a file name: letters, digits, dots and
// dashes stay, the rest become underscores.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	return b.String()
}

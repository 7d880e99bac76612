package panesview

import (
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/words"
)

// Marker row glyphs. Letters rather than colours tell the kinds apart, so
// the row reads the same under NO_COLOR.
const (
	MarkRun  = '─' // a save running in this column
	MarkEnd  = '┤' // the save ended in this column
	markGap  = '×' // disconnected: no samples
	markNone = ' '
)

// MarkLegend is the marker row's label; markLegendShort where it does not fit.
// A slot migration's fork (Valkey 9.0's atomic slot migration) is rare, so
// its letter joins the legend only while one is in the row.
const (
	MarkLegend       = "F fork L forkless A aof ×gap"
	markLegendShort  = "saves F/L/A ×gap"
	markLegendM      = "F fork L forkless A aof M slot migration ×gap"
	markLegendMMid   = "F fork L forkless A aof M migr. ×gap"
	MarkLegendMShort = "saves F/L/A/M ×gap"
)

// MarkLegendFor is the widest legend that fits labelW cells.
func MarkLegendFor(labelW int, migration bool) string {
	all := []string{MarkLegend, markLegendShort}
	if migration {
		all = []string{markLegendM, MarkLegendMShort}
	}
	for _, l := range all[:len(all)-1] {
		if labelW >= len(l)+1 { // bytes, as the legend was always measured
			return l
		}
	}
	return all[len(all)-1]
}

// drawMarks renders the marker row, w cells of dt each ending at now:
// where saves ran and where the server was unreachable.
func drawMarks(st *style.Styles, now, dt time.Duration, w int, spans []store.Span, gaps []store.Gap) string {
	if dt <= 0 || w <= 0 {
		return ""
	}
	col := func(t time.Duration) int { return plot.Column(t, now, dt, w) }
	row := make([]rune, w)
	for i := range row {
		row[i] = markNone
	}
	fill := func(from, to int, r rune) {
		for k := max(from, 0); k <= to && k < w; k++ {
			row[k] = r
		}
	}
	for _, g := range gaps {
		to := g.To
		if g.Open {
			to = now
		}
		fill(col(g.From), col(to), markGap)
	}
	for _, s := range spans {
		a, b := col(s.Start), col(s.End)
		fill(a, b, MarkRun)
		if s.Ended && b >= 0 && b < w && b != a {
			row[b] = MarkEnd
		}
		if a >= 0 && a < w {
			row[a] = words.Mark(s.Kind)
		}
	}
	// Style runs of the same class together: one paint per run.
	class := func(r rune) int {
		switch r {
		case markNone:
			return 0
		case markGap:
			return 1
		}
		return 2
	}
	var out strings.Builder
	start := 0
	for k := 1; k <= w; k++ {
		if k < w && class(row[k]) == class(row[start]) {
			continue
		}
		seg := string(row[start:k])
		switch class(row[start]) {
		case 1:
			seg = st.Gap.R(seg)
		case 2:
			seg = st.Markers.R(seg)
		}
		out.WriteString(seg)
		start = k
	}
	return out.String()
}

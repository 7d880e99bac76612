package ui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// A pane's status blocks (the save running now, or the next save's
// forecast, and the last save) are fields, a label and a value each, in
// aligned columns, as the reports table's are: laid out for the width and
// the rows a block gets, never a sentence cut short. What does not fit on
// one row goes to the next; where the rows run out, the least important
// fields go first, by the written priority below.

// prio is a field's place in the written priority (issue 38): when a
// block has too few rows, fields go from the end of this list first.
// A block lists its fields in the order it reads; they are laid out
// sorted by priority, that order kept within each.
type prio int

const (
	prioProgress prio = iota // a running save's progress
	prioKeys                 // its keys processed / total: always shown while a save runs
	prioETA                  // its ETA, or the phase it is in
	prioCOW                  // copy-on-write: now, the last save's, the next's forecast
	prioDuration             // how long the last save took
	prioPause                // its fork pause (a forkless save: the writers it blocked)
	prioPing                 // PING during it
	prioOps                  // ops/s before → during
	prioForecast             // the forecast against what it cost
	prioHeadroom             // the next save's headroom
	prioMore                 // every other field
)

// field is one figure of a block.
type field struct {
	label string // plain: drawn in the label style
	value string // styled
	prio  prio
	vw    int // the value's width in cells
	// short is the value in fewer cells (its figure without the words
	// around it), or "": where the rows are short, a field says less
	// before it goes.
	short string
}

// fieldOf makes a field, measuring its value once.
func fieldOf(p prio, label, value string) field {
	return field{label: label, value: value, prio: p, vw: ansi.StringWidth(value)}
}

// or gives f a shorter value (see field.short).
func (f field) or(short string) field {
	f.short = short
	return f
}

// shorten is fs with field i's short value in place of its value.
func shorten(fs []field, i int) []field {
	out := slices.Clone(fs)
	out[i].value, out[i].vw, out[i].short = fs[i].short, ansi.StringWidth(fs[i].short), ""
	return out
}

// Gaps of a field grid: between the columns, between a label and its value.
const (
	colGap   = 3
	labelGap = 1
)

// byPrio sorts fields by priority, keeping the given order within one.
func byPrio(fs []field) []field {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b field) int { return int(a.prio) - int(b.prio) })
	return out
}

// gridCols is how wide each column of fs laid out row by row in c
// columns is, its widest label and its widest value, and how wide the
// whole grid is. The last field sets no column's value width: nothing
// follows it, so it may run on over the columns after its own.
func gridCols(fs []field, c int) (lw, vw []int, total int) {
	lw, vw = make([]int, c), make([]int, c)
	for i, f := range fs {
		j := i % c
		lw[j] = max(lw[j], len(f.label)) // labels are ASCII words
		if i < len(fs)-1 {
			vw[j] = max(vw[j], f.vw)
		}
	}
	last, start := len(fs)-1, 0 // start: where column j starts
	for j := range c {
		if j == last%c {
			total = max(total, start+lw[j]+labelGap+fs[last].vw)
		}
		start += lw[j] + labelGap + vw[j]
		total = max(total, start)
		start += colGap
	}
	return lw, vw, total
}

// grid lays fs (in priority order) out row by row in aligned columns, in
// at most rows rows of width cells: as many fields as fit, the most
// important first, in as many columns as fit beside each other. It
// returns the rows (each at most width cells) and how many fields it left
// out. A field wider than the row alone is cut between words.
func grid(st *styles, fs []field, width, rows int) ([]string, int) {
	if rows <= 0 || len(fs) == 0 {
		return nil, len(fs)
	}
	for k := len(fs); k > 0; k-- {
		// The most columns that fit: fewer would only take more rows.
		for c := k; c >= 1; c-- {
			lw, vw, total := gridCols(fs[:k], c)
			if total > width {
				continue
			}
			if (k+c-1)/c > rows {
				break
			}
			return drawGrid(st, fs[:k], c, lw, vw), len(fs) - k
		}
	}
	// Not even one field fits a row: one a row, each cut to the width.
	k := min(rows, len(fs))
	out := make([]string, k)
	for i, f := range fs[:k] {
		out[i] = fitLine(st.label.r(f.label)+strings.Repeat(" ", labelGap)+f.value, width)
	}
	return out, len(fs) - k
}

// drawGrid draws fs in c columns of the widths given: labels and values
// each aligned in their column, nothing after a row's last value.
func drawGrid(st *styles, fs []field, c int, lw, vw []int) []string {
	var out []string
	var b strings.Builder
	for i, f := range fs {
		j := i % c
		if j > 0 {
			b.WriteString(strings.Repeat(" ", colGap))
		}
		b.WriteString(st.label.r(f.label))
		b.WriteString(strings.Repeat(" ", lw[j]-len(f.label)+labelGap))
		b.WriteString(f.value)
		if j < c-1 && i < len(fs)-1 {
			b.WriteString(strings.Repeat(" ", vw[j]-f.vw))
		}
		if j == c-1 || i == len(fs)-1 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	return out
}

// inline lays fs out on one row after head, a single space between a
// label and its value, colGap between fields: as many as fit, the most
// important first. It returns the row and how many fields it left out.
func inline(st *styles, head string, fs []field, width int) (string, int) {
	var b strings.Builder
	b.WriteString(head)
	w := ansi.StringWidth(head)
	for i, f := range fs {
		fw := len(f.label) + labelGap + f.vw
		if w > 0 {
			fw += colGap
		}
		if w+fw > width {
			return b.String(), len(fs) - i
		}
		if w > 0 {
			b.WriteString(strings.Repeat(" ", colGap))
		}
		b.WriteString(st.label.r(f.label) + strings.Repeat(" ", labelGap) + f.value)
		w += fw
	}
	return b.String(), 0
}

// minBar is the narrowest progress bar drawn.
const minBar = 5

// block is a status block: its title (what it is: kind, trigger,
// status), a shorter title for a block of one row, and its fields in
// reading order; extra, when set, fills the title row's room after the
// title (the progress bar), given the cells left.
type block struct {
	title, short string
	fields       []field
	extra        func(room int) string
	extraInline  bool // extra follows the fields of a one-row block too
	// gutter puts a short title left of the fields rather than above
	// them: a row more for fields.
	gutter bool
	// note replaces the fields: a block with nothing to measure yet
	// ("last save none yet") says what it will show.
	note string
}

// lines lays the block out in rows rows of width cells: its title on the
// first row and its fields in a grid below it (or right of it, in its
// gutter), or, in one row, its short title with as many fields as fit
// after it. It returns the rows and how many fields were left out.
func (b *block) lines(st *styles, width, rows int) ([]string, int) {
	fs := byPrio(b.fields)
	out, left := b.layout(st, fs, width, rows)
	// Fields go short, the least important first, until none is left
	// out (fs is in priority order: from its end).
	for i := len(fs) - 1; i >= 0 && left > 0; i-- {
		if fs[i].short == "" {
			continue
		}
		fs = shorten(fs, i)
		if o, l := b.layout(st, fs, width, rows); l < left {
			out, left = o, l
		}
	}
	return out, left
}

// layout is lines with the fields fs.
func (b *block) layout(st *styles, fs []field, width, rows int) ([]string, int) {
	switch {
	case rows <= 0:
		return nil, len(fs)
	case rows == 1:
		row, left := inline(st, b.short, fs, width)
		if b.extra != nil && b.extraInline {
			// The bar in the room the fields leave, where it reads.
			if room := width - ansi.StringWidth(row) - colGap; room >= minBar {
				if x := b.extra(room); x != "" && ansi.StringWidth(x) <= room {
					row += strings.Repeat(" ", colGap) + x
				}
			}
		}
		return []string{fitLine(row, width)}, left
	case b.gutter && b.note != "":
		return []string{fitLine(b.title+strings.Repeat(" ", colGap)+b.note, width)}, len(fs)
	case b.gutter:
		indent := ansi.StringWidth(b.title) + colGap
		g, left := grid(st, fs, width-indent, rows)
		out := make([]string, 0, len(g))
		for i, l := range g {
			head := strings.Repeat(" ", indent)
			if i == 0 {
				head = b.title + strings.Repeat(" ", colGap)
			}
			out = append(out, head+l)
		}
		if len(out) == 0 {
			out = append(out, b.title)
		}
		return out, left
	}
	head := fitLine(b.title, width)
	if b.extra != nil {
		if room := width - ansi.StringWidth(head) - 2; room > 0 {
			if x := b.extra(room); x != "" {
				head += "  " + x
			}
		}
	}
	out := []string{head}
	if b.note != "" {
		return append(out, fitLine("  "+b.note, width)), len(fs)
	}
	g, left := grid(st, fs, width-2, rows-1)
	for _, l := range g {
		out = append(out, "  "+l)
	}
	return out, left
}

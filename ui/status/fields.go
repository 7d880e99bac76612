// Package status is what a pane says above its charts: the state line
// (connection, PING, how the server saves), the block of the save now
// (the running one, or the next one's forecast) and the last save's block.
// A block's figures are fields, a label and a value each, in aligned
// columns, as the reports table's are: laid out for the width and the
// rows a block gets, never a sentence cut short. What does not fit on one
// row goes to the next; where the rows run out, the least important
// fields go first, by the written priority (Prio). A new figure of a
// block is one field in its list (status.go, next.go), with its priority.
package status

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
)

// Prio is a field's place in the written priority (issue 38): when a
// block has too few rows, fields go from the end of this list first.
// A block lists its fields in the order it reads; they are laid out
// sorted by priority, that order kept within each.
type Prio int

const (
	PrioProgress Prio = iota // a running save's progress
	PrioKeys                 // its keys processed / total: always shown while a save runs
	PrioETA                  // its ETA, or the phase it is in
	PrioCOW                  // copy-on-write: now, the last save's, the next's forecast
	PrioDuration             // how long the last save took
	PrioPause                // its fork pause (a forkless save: the writers it blocked)
	PrioPing                 // PING during it
	PrioOps                  // ops/s before → during
	PrioForecast             // the forecast against what it cost
	PrioHeadroom             // the next save's headroom
	PrioMore                 // every other field
)

// Field is one figure of a block.
type Field struct {
	Label string // plain: drawn in the label style
	Value string // styled
	Prio  Prio
	vw    int // the value's width in cells
	// Short is the value in fewer cells (its figure without the words
	// around it), or "": where the rows are short, a field says less
	// before it goes.
	Short string
}

// fieldOf makes a field, measuring its value once.
func fieldOf(p Prio, label, value string) Field {
	return Field{Label: label, Value: value, Prio: p, vw: ansi.StringWidth(value)}
}

// or gives f a shorter value (see Field.Short).
func (f Field) or(short string) Field {
	f.Short = short
	return f
}

// shorten is fs with field i's short value in place of its value.
func shorten(fs []Field, i int) []Field {
	out := slices.Clone(fs)
	out[i].Value, out[i].vw, out[i].Short = fs[i].Short, ansi.StringWidth(fs[i].Short), ""
	return out
}

// Gaps of a field grid: between the columns, between a label and its value.
const (
	colGap   = 3
	labelGap = 1
)

// ByPrio sorts fields by priority, keeping the given order within one.
func ByPrio(fs []Field) []Field {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b Field) int { return int(a.Prio) - int(b.Prio) })
	return out
}

// gridCols is how wide each column of fs laid out row by row in c
// columns is, its widest label and its widest value, and how wide the
// whole grid is. The last field sets no column's value width: nothing
// follows it, so it may run on over the columns after its own.
func gridCols(fs []Field, c int) (lw, vw []int, total int) {
	lw, vw = make([]int, c), make([]int, c)
	for i, f := range fs {
		j := i % c
		lw[j] = max(lw[j], len(f.Label)) // labels are ASCII words
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
func grid(st *style.Styles, fs []Field, width, rows int) ([]string, int) {
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
		out[i] = text.FitLine(st.Label.R(f.Label)+strings.Repeat(" ", labelGap)+f.Value, width)
	}
	return out, len(fs) - k
}

// drawGrid draws fs in c columns of the widths given: labels and values
// each aligned in their column, nothing after a row's last value.
func drawGrid(st *style.Styles, fs []Field, c int, lw, vw []int) []string {
	var out []string
	var b strings.Builder
	for i, f := range fs {
		j := i % c
		if j > 0 {
			b.WriteString(strings.Repeat(" ", colGap))
		}
		b.WriteString(st.Label.R(f.Label))
		b.WriteString(strings.Repeat(" ", lw[j]-len(f.Label)+labelGap))
		b.WriteString(f.Value)
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
func inline(st *style.Styles, head string, fs []Field, width int) (string, int) {
	var b strings.Builder
	b.WriteString(head)
	w := ansi.StringWidth(head)
	for i, f := range fs {
		fw := len(f.Label) + labelGap + f.vw
		if w > 0 {
			fw += colGap
		}
		if w+fw > width {
			return b.String(), len(fs) - i
		}
		if w > 0 {
			b.WriteString(strings.Repeat(" ", colGap))
		}
		b.WriteString(st.Label.R(f.Label) + strings.Repeat(" ", labelGap) + f.Value)
		w += fw
	}
	return b.String(), 0
}

// minBar is the narrowest progress bar drawn.
const minBar = 5

// Block is a status block: its title (what it is: kind, trigger,
// status), a shorter title for a block of one row, and its fields in
// reading order; extra, when set, fills the title row's room after the
// title (the progress bar), given the cells left.
type Block struct {
	Title, Short string
	Fields       []Field
	extra        func(room int) string
	extraInline  bool // extra follows the fields of a one-row block too
	// gutter puts a short title left of the fields rather than above
	// them: a row more for fields.
	gutter bool
	// note replaces the fields: a block with nothing to measure yet
	// ("last save none yet") says what it will show.
	note string
}

// Lines lays the block out in rows rows of width cells: its title on the
// first row and its fields in a grid below it (or right of it, in its
// gutter), or, in one row, its short title with as many fields as fit
// after it. It returns the rows and how many fields were left out.
func (b *Block) Lines(st *style.Styles, width, rows int) ([]string, int) {
	fs := ByPrio(b.Fields)
	out, left := b.layout(st, fs, width, rows)
	// Fields go short, the least important first, until none is left
	// out (fs is in priority order: from its end).
	for i := len(fs) - 1; i >= 0 && left > 0; i-- {
		if fs[i].Short == "" {
			continue
		}
		fs = shorten(fs, i)
		if o, l := b.layout(st, fs, width, rows); l < left {
			out, left = o, l
		}
	}
	return out, left
}

// layout is Lines with the fields fs.
func (b *Block) layout(st *style.Styles, fs []Field, width, rows int) ([]string, int) {
	switch {
	case rows <= 0:
		return nil, len(fs)
	case rows == 1:
		row, left := inline(st, b.Short, fs, width)
		if b.extra != nil && b.extraInline {
			// The bar in the room the fields leave, where it reads.
			if room := width - ansi.StringWidth(row) - colGap; room >= minBar {
				if x := b.extra(room); x != "" && ansi.StringWidth(x) <= room {
					row += strings.Repeat(" ", colGap) + x
				}
			}
		}
		return []string{text.FitLine(row, width)}, left
	case b.gutter && b.note != "":
		return []string{text.FitLine(b.Title+strings.Repeat(" ", colGap)+b.note, width)}, len(fs)
	case b.gutter:
		indent := ansi.StringWidth(b.Title) + colGap
		g, left := grid(st, fs, width-indent, rows)
		out := make([]string, 0, len(g))
		for i, l := range g {
			head := strings.Repeat(" ", indent)
			if i == 0 {
				head = b.Title + strings.Repeat(" ", colGap)
			}
			out = append(out, head+l)
		}
		if len(out) == 0 {
			out = append(out, b.Title)
		}
		return out, left
	}
	head := text.FitLine(b.Title, width)
	if b.extra != nil {
		if room := width - ansi.StringWidth(head) - 2; room > 0 {
			if x := b.extra(room); x != "" {
				head += "  " + x
			}
		}
	}
	out := []string{head}
	if b.note != "" {
		return append(out, text.FitLine("  "+b.note, width)), len(fs)
	}
	g, left := grid(st, fs, width-2, rows-1)
	for _, l := range g {
		out = append(out, "  "+l)
	}
	return out, left
}

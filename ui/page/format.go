package page

import (
	"fmt"
	"strconv"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/units"
)

// cell is a table cell: the text a reader sees and, in data-v, the exact
// value it stands for (bytes, seconds, ops/s, ms) for scripts and tests.
type cell struct {
	Text string
	Raw  string
}

var na = cell{Text: "n/a"}

func bytesCell(o source.Opt[int64]) cell {
	v, ok := o.Get()
	if !ok {
		return na
	}
	return cell{units.BytesFixed(float64(v)), strconv.FormatInt(v, 10)}
}

// cowCell is a save's copy-on-write: none for a forkless one (no child),
// n/a where no figure is this save's.
func cowCell(r *source.SaveReport) cell {
	if r.COWFrom == source.FromNoChild {
		return cell{"none (no child)", "0"}
	}
	return bytesCell(r.COW)
}

func secsCell(d time.Duration) cell {
	return cell{strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s", strconv.FormatFloat(d.Seconds(), 'f', -1, 64)}
}

func optSecsCell(o source.Opt[int64]) cell {
	v, ok := o.Get()
	if !ok {
		return na
	}
	return cell{strconv.FormatInt(v, 10) + " s", strconv.FormatInt(v, 10)}
}

func pauseCell(o source.Opt[time.Duration]) cell {
	d, ok := o.Get()
	if !ok {
		return na
	}
	return cell{msText(float64(d) / 1e6), strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64)}
}

func msText(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
}

func latencyMs(d time.Duration) cell {
	v := float64(d) / 1e6
	return cell{msText(v), strconv.FormatFloat(v, 'f', -1, 64)}
}

func opsCell(o source.Opt[float64]) cell {
	v, ok := o.Get()
	if !ok {
		return na
	}
	return cell{units.CountFloat(v), strconv.FormatFloat(v, 'f', -1, 64)}
}

func pctCell(o source.Opt[float64]) cell {
	v, ok := o.Get()
	if !ok {
		return na
	}
	return cell{fmt.Sprintf("%.0f %%", v*100), strconv.FormatFloat(v, 'f', -1, 64)}
}

// orNA is s, or n/a when empty.
func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// maxText bounds any text from a file that reaches a figure or the page,
// in bytes.
const maxText = 400

// clean makes text from a file inert for a figure and the page with the
// house's sanitiser: control, format and bidi characters (an escape
// sequence, a bidi override, a NUL an SVG file may not hold) are written
// out as escapes, and it is cut at maxText. html/template and gonum's SVG
// writer escape markup on top of this.
func clean(s string) string { return inert.Cut(s, maxText) }

// triggerText says who started a save.
func triggerText(t source.Trigger) string {
	switch {
	case t.Kind == "":
		return "n/a"
	case t.Detail == "":
		return string(t.Kind)
	}
	return string(t.Kind) + " (" + t.Detail + ")"
}

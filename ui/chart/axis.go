package chart

import (
	"strconv"
	"strings"
	"time"
)

// Tick is a label on an axis, at a column.
type Tick struct {
	Col   int
	Label string
}

// tickSteps are the round spans a time axis is labelled at.
var tickSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// tickGap is the fewest cells between two time labels.
const tickGap = 12

// TimeTicks labels a time axis of width columns, each covering per, whose
// last column is now: how long ago, "-2m ... -1m ... now", at round
// steps no closer than tickGap cells, and the oldest time at the left
// edge when it fits.
func TimeTicks(width int, per time.Duration) []Tick {
	if width <= 0 || per <= 0 {
		return nil
	}
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if int(s/per) >= tickGap {
			step = s
			break
		}
	}
	ticks := []Tick{{Col: width - 1, Label: "now"}}
	for ago := step; ; ago += step {
		col := width - 1 - int(ago/per)
		if col < 0 {
			break
		}
		ticks = append(ticks, Tick{Col: col, Label: "-" + FmtAgo(ago)})
	}
	// The left edge: the oldest time shown, unless a round tick is near.
	edge := time.Duration(width) * per
	if last := ticks[len(ticks)-1]; last.Col > 6 {
		ticks = append(ticks, Tick{Col: 0, Label: "-" + FmtAgo(edge)})
	}
	return ticks
}

// FmtAgo renders a span for an axis: "30s", "1m", "1m30s", "2h".
func FmtAgo(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	var b strings.Builder
	if h > 0 {
		b.WriteString(strconv.Itoa(int(h)) + "h")
	}
	if m > 0 {
		b.WriteString(strconv.Itoa(int(m)) + "m")
	}
	if s > 0 || b.Len() == 0 {
		b.WriteString(strconv.Itoa(int(s)) + "s")
	}
	return b.String()
}

// AxisLine draws ticks on a line of width cells filled with fill: a label
// is centred on its column, but kept inside the line (the rightmost ends
// at the last column, the leftmost starts at the first), and one that
// would touch a label already placed is left out. Ticks are placed in
// the order given, so the first ones win.
func AxisLine(width int, ticks []Tick, fill rune) string {
	line := make([]rune, width)
	used := make([]bool, width)
	for i := range line {
		line[i] = fill
	}
	for _, t := range ticks {
		lab := []rune(" " + t.Label + " ")
		n := len(lab)
		start := t.Col - n/2
		start = min(max(start, 0), width-n)
		if start < 0 {
			continue
		}
		free := true
		for k := max(start-1, 0); k < min(start+n+1, width); k++ {
			free = free && !used[k]
		}
		if !free {
			continue
		}
		for k, r := range lab {
			line[start+k], used[start+k] = r, true
		}
	}
	return string(line)
}

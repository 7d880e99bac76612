package chart

import (
	"strings"
	"testing"
	"time"
)

func series(vals ...float64) *Series {
	s := &Series{}
	s.Reset(len(vals))
	for i, v := range vals {
		if !isNaN(v) {
			s.V[i], s.OK[i] = v, true
		}
	}
	return s
}

func isNaN(v float64) bool { return v != v }

var nan = func() float64 { z := 0.0; return z / z }()

func TestLineHeightFollowsValue(t *testing.T) {
	l := NewLine(4, 2)
	// A flat line at the top of the scale, then at the bottom.
	rows := l.Draw(series(10, 10, 10, 10, 0, 0, 0, 0), 10)
	if len(rows) != 2 || rows[0][:2*3] == "      " || strings.TrimSpace(rows[1][6:]) == "" {
		t.Fatalf("rows %q", rows)
	}
	top := []rune(rows[0])
	if top[0] != '⠉' || top[3] == '⠉' {
		t.Errorf("top row %q: the full values should be on it, the zeros not", rows[0])
	}
	if bottom := []rune(rows[1]); bottom[3] != '⣀' {
		t.Errorf("bottom row %q: zero is a present value, drawn at the bottom", rows[1])
	}
}

func TestLineLeavesAbsentBlank(t *testing.T) {
	l := NewLine(3, 1)
	rows := l.Draw(series(5, 5, nan, nan, 5, 5), 10)
	if r := []rune(rows[0]); r[1] != ' ' || r[0] == ' ' || r[2] == ' ' {
		t.Errorf("absent columns drew something, or present ones nothing: %q", rows[0])
	}
	// A hole in the data: no line joins its two sides even when adjacent.
	s := series(0, 0, 10, 10)
	s.Brk[2] = true
	joined := l.Draw(series(0, 0, 10, 10, nan, nan), 10)[0]
	broken := NewLine(3, 1).Draw(s, 10)[0]
	if joined == broken {
		t.Errorf("a break drew the same as a join: %q", joined)
	}
}

func TestBarsDrawTinyValues(t *testing.T) {
	b := NewBars(3, 1)
	rows := b.Draw(series(0.0001, nan, 1), 1)
	if r := []rune(rows[0]); r[0] == ' ' || r[1] != ' ' || r[2] != '█' {
		t.Errorf("bars %q: a tiny present value draws a block, an absent one nothing", rows[0])
	}
}

func TestXYLabelsEachCurve(t *testing.T) {
	c := NewXY(20, 5)
	up := []Point{{0, 0, true}, {50, 5, true}, {100, 10, true}}
	flat := []Point{{0, 0, true}, {100, 0, true}}
	cells, owner := c.Draw([][]Point{up, flat}, []rune{'1', '2'}, 0, 100, 0, 10)
	var text []string
	for _, row := range cells {
		text = append(text, string(row))
	}
	all := strings.Join(text, "\n")
	if strings.Count(all, "1") != 1 || strings.Count(all, "2") != 1 {
		t.Fatalf("each curve labelled once:\n%s", all)
	}
	if !strings.Contains(text[0], "1") || !strings.Contains(text[4], "2") {
		t.Errorf("labels at the curves' ends (top right, bottom right):\n%s", all)
	}
	if owner[4][0] != 1 || owner[0][19] != 0 {
		t.Errorf("owners: bottom left %d, top right %d", owner[4][0], owner[0][19])
	}
	// A break leaves the cells between blank.
	gap := []Point{{0, 5, true}, {40, 5, false}, {100, 5, true}}
	cells, _ = c.Draw([][]Point{gap}, nil, 0, 100, 0, 10)
	if mid := string(cells[2][6:14]); strings.TrimSpace(mid) != "" {
		t.Errorf("a broken curve drew through its gap: %q", mid)
	}
}

func TestTimeTicks(t *testing.T) {
	// 60 columns of 2 s: a 2-minute window.
	line := AxisLine(60, TimeTicks(60, 2*time.Second), '─')
	if !strings.HasSuffix(line, " now ") || !strings.Contains(line, " -1m ") || !strings.HasPrefix(line, " -2m ") {
		t.Errorf("axis %q", line)
	}
	if n := len([]rune(line)); n != 60 {
		t.Errorf("axis of %d cells", n)
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{30 * time.Second, "30s"}, {90 * time.Second, "1m30s"}, {2 * time.Hour, "2h"}, {0, "0s"}} {
		if got := FmtAgo(tc.d); got != tc.want {
			t.Errorf("FmtAgo(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

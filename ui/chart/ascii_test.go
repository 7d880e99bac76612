package chart

import (
	"strings"
	"testing"
)

// asciiOnly reports whether every rune of rows is below 0x80.
func asciiOnly(rows []string) bool {
	for _, r := range strings.Join(rows, "") {
		if r >= 0x80 {
			return false
		}
	}
	return true
}

func TestASCIILine(t *testing.T) {
	l := NewLine(4, 3)
	l.ASCII = true
	// Low, then at the top: a climb of more than a row shows as |.
	rows := l.Draw(series(0, 0, 0, 0, 10, 10, 10, 10), 10)
	want := []string{"  ''", "  | ", "__  "}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") || !asciiOnly(rows) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	// Absent is blank, and a hole breaks the line.
	s := series(0, 0, nan, nan, 10, 10, 10, 10)
	rows = l.Draw(s, 10)
	if r := []rune(rows[2]); r[1] != ' ' || strings.ContainsRune(strings.Join(rows, ""), '|') {
		t.Errorf("absent or broken: %q", rows)
	}
}

func TestASCIIBars(t *testing.T) {
	b := NewBars(4, 2)
	b.ASCII = true
	rows := b.Draw(series(0.0001, nan, 5, 10), 10)
	want := []string{"   #", "_ ##"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows %q, want %q: a tiny present value still shows, an absent one does not", rows, want)
	}
	if got := b.Draw(series(3, 4, 6, 8), 10); got[0] != "  _=" || got[1] != "=###" {
		t.Errorf("tops: %q", got)
	}
}

func TestASCIIXY(t *testing.T) {
	c := NewXY(10, 3)
	c.ASCII = true
	cells, owner := c.Draw([][]Point{{{X: 0, Y: 0, OK: true}, {X: 100, Y: 10, OK: true}}}, []rune{'1'}, 0, 100, 0, 10)
	var rows []string
	for _, r := range cells {
		rows = append(rows, string(r))
	}
	if !asciiOnly(rows) || !strings.Contains(strings.Join(rows, ""), "*") || !strings.Contains(strings.Join(rows, ""), "1") {
		t.Errorf("rows %q", rows)
	}
	if owner[2][0] != 0 {
		t.Errorf("the curve owns its cells: %v", owner)
	}
}

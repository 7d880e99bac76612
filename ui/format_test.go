package ui

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{fmtOptBytes(source.Opt[int64]{}), "n/a"},
		{fmtOptBytes(source.Some[int64](0)), "0 B"},
		{fmtOptDelta(source.Some[int64](3 << 20)), "+3.00 MiB"},
		{fmtOptDelta(source.Some[int64](-512)), "-512 B"},
		{fmtOptDelta(source.Opt[int64]{}), "n/a"},
		{fmtRate(0), "0"},
		{fmtRate(999), "999"},
		{fmtRate(999.7), "1.00k"},
		{fmtRate(12_345), "12.3k"},
		{fmtRate(2_500_000), "2.50M"},
		{fmtOptRate(source.Opt[float64]{}), "n/a"},
		{fmtLatency(0), "0"},
		{fmtLatency(500 * time.Nanosecond), "<1µs"},
		{fmtLatency(87 * time.Microsecond), "87µs"},
		{fmtLatency(999_700 * time.Nanosecond), "1.00ms"},
		{fmtLatency(1_234 * time.Microsecond), "1.23ms"},
		{fmtLatency(31 * time.Millisecond), "31.0ms"},
		{fmtLatency(2500 * time.Millisecond), "2.50s"},
		{fmtElapsed(7800 * time.Millisecond), "7.8s"},
		{fmtElapsed(65 * time.Second), "1m05s"},
		{fmtElapsed(3723 * time.Second), "1h02m03s"},
		{fmtElapsed(-time.Second), "0.0s"},
		{fmtOptElapsed(source.Opt[time.Duration]{}), "n/a"},
		{fmtOptCount(source.Opt[int64]{}), "n/a"},
		{fmtOrNA(""), "n/a"},
		{fitRight("abc", 5), "  abc"},
		{fitRight("abcdef", 4), "abc…"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

// TestFitCellsWide: a line cut where a wide character stood is padded to
// the full width (the border after it stays in its column), and so is a
// right-aligned one.
func TestFitCellsWide(t *testing.T) {
	for _, tt := range []struct {
		in   string
		w    int
		want string
	}{
		{"abc世界", 5, "abc… "},
		{"abc世界", 7, "abc世界"},
		{"abc", 5, "abc  "},
		{"abcdef", 4, "abc…"},
		{"x", 0, ""},
	} {
		if got := fitCells(tt.in, tt.w); got != tt.want {
			t.Errorf("fitCells(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
	if got := fitRight("abc世界", 5); got != " abc…" {
		t.Errorf("fitRight(%q, 5) = %q, want %q", "abc世界", got, " abc…")
	}
	if got := fitRight("ab", 4); got != "  ab" {
		t.Errorf("fitRight(%q, 4) = %q", "ab", got)
	}
}

package text

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{OptBytes(source.Opt[int64]{}), "n/a"},
		{OptBytes(source.Some[int64](0)), "0 B"},
		{OptDelta(source.Some[int64](3 << 20)), "+3.00 MiB"},
		{OptDelta(source.Some[int64](-512)), "-512 B"},
		{OptDelta(source.Opt[int64]{}), "n/a"},
		{Rate(0), "0"},
		{Rate(999), "999"},
		{Rate(999.7), "1.00k"},
		{Rate(12_345), "12.3k"},
		{Rate(2_500_000), "2.50M"},
		{OptRate(source.Opt[float64]{}), "n/a"},
		{Latency(0), "0"},
		{Latency(500 * time.Nanosecond), "<1µs"},
		{Latency(87 * time.Microsecond), "87µs"},
		{Latency(999_700 * time.Nanosecond), "1.00ms"},
		{Latency(1_234 * time.Microsecond), "1.23ms"},
		{Latency(31 * time.Millisecond), "31.0ms"},
		{Latency(2500 * time.Millisecond), "2.50s"},
		{Elapsed(7800 * time.Millisecond), "7.8s"},
		{Elapsed(65 * time.Second), "1m05s"},
		{Elapsed(3723 * time.Second), "1h02m03s"},
		{Elapsed(-time.Second), "0.0s"},
		{OptElapsed(source.Opt[time.Duration]{}), "n/a"},
		{OptCount(source.Opt[int64]{}), "n/a"},
		{OrNA(""), "n/a"},
		{FitRight("abc", 5), "  abc"},
		{FitRight("abcdef", 4), "abc…"},
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
		if got := FitCells(tt.in, tt.w); got != tt.want {
			t.Errorf("fitCells(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
	if got := FitRight("abc世界", 5); got != " abc…" {
		t.Errorf("fitRight(%q, 5) = %q, want %q", "abc世界", got, " abc…")
	}
	if got := FitRight("ab", 4); got != "  ab" {
		t.Errorf("fitRight(%q, 4) = %q", "ab", got)
	}
}

func TestSamplingNote(t *testing.T) {
	for _, c := range []struct {
		rest, fine time.Duration
		want       string
	}{
		{time.Second, 200 * time.Millisecond, "INFO every 1s, 200ms while saving"},
		{200 * time.Millisecond, 200 * time.Millisecond, "INFO every 200ms"},
		{time.Second, 0, "INFO every 1s"},
	} {
		if got := SamplingNote(c.rest, c.fine, "while saving"); got != c.want {
			t.Errorf("SamplingNote(%s, %s) = %q, want %q", c.rest, c.fine, got, c.want)
		}
	}
}

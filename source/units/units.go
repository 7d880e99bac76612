// Package units is the one place numbers become text for people: byte
// sizes in binary units, counts with thousands separators, three
// significant digits. The screen, the bench table and the report page all
// print through it, so a size reads the same everywhere it is shown.
package units

import (
	"math"
	"strconv"
	"strings"
)

// byteNames are binary units: INFO and /proc count bytes of pages.
var byteNames = [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}

// Sig3 formats v with three significant digits, the precision a glance at a
// live chart can use; more digits would only flicker.
func Sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 9.995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// Bytes renders a byte count with three significant digits, e.g.
// "12.3 MiB", for the live screen where a column is narrow.
func Bytes(n int64) string {
	if n < 0 {
		// As uint64, -n is the magnitude even for math.MinInt64, which is
		// its own negation as an int64.
		return "-" + magnitude(uint64(-n))
	}
	return magnitude(uint64(n))
}

func magnitude(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	v := float64(n)
	u := 0
	// Move up a unit before rounding would print "1024 KiB" (or four
	// digits, "1000 KiB", wider than the column).
	for v >= 999.5 && u < len(byteNames)-1 {
		v /= 1024
		u++
	}
	return Sig3(v) + " " + byteNames[u]
}

// BytesFixed renders a size with one decimal, e.g. "354.7 MiB", for
// tables and pages where a reader compares rows: every row has the same
// precision whatever its unit.
func BytesFixed(v float64) string {
	sign := ""
	if v < 0 {
		sign = "-"
	}
	a := math.Abs(v)
	div, name := Scale(a)
	if div == 1 {
		return sign + strconv.FormatFloat(a, 'f', 0, 64) + " B"
	}
	return sign + strconv.FormatFloat(a/div, 'f', 1, 64) + " " + name
}

// Scale picks the binary unit BytesFixed shows a size v >= 0 in (and an
// axis labels its ticks in): the divisor and the unit's name. It stops at
// TiB, the largest a table has been asked to show.
func Scale(v float64) (float64, string) {
	div := 1.0
	i := 0
	for v >= 1024*div && i < len(byteNames)-2 {
		div *= 1024
		i++
	}
	return div, byteNames[i]
}

// Count renders an integer with thousands separators, e.g. "131,072":
// counts are exact and a reader compares them digit by digit.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	if s[0] == '-' {
		b.WriteByte('-')
		s = s[1:]
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// CountFloat is Count of v rounded to the nearest whole number (half away
// from zero), for averages of counts such as ops/s.
func CountFloat(v float64) string { return Count(int64(math.Round(v))) }

package units

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{Bytes(0), "0 B"},
		{Bytes(math.MinInt64), "-8192 PiB"},
		{Bytes(math.MaxInt64), "8192 PiB"},
		{Bytes(-1536), "-1.50 KiB"},
		{Bytes(1023), "1023 B"},
		{Bytes(1024), "1.00 KiB"},
		{Bytes(1536), "1.50 KiB"},
		{Bytes(12_900_000), "12.3 MiB"},
		{Bytes(999 * 1024), "999 KiB"},
		{Bytes(1000 * 1024), "0.98 MiB"},   // four digits never show
		{Bytes(1024*1024 - 1), "1.00 MiB"}, // not "1024 KiB"
		{Bytes(3 << 30), "3.00 GiB"},
		{Bytes(-2048), "-2.00 KiB"},
		{Count(0), "0"},
		{Count(999), "999"},
		{Count(1000), "1,000"},
		{Count(131072), "131,072"},
		{Count(-1234567), "-1,234,567"},
		// Tables print one decimal whatever the unit, B as a whole
		// number, and stop at TiB.
		{BytesFixed(0), "0 B"},
		{BytesFixed(1023), "1023 B"},
		{BytesFixed(1024), "1.0 KiB"},
		{BytesFixed(-1536), "-1.5 KiB"},
		{BytesFixed(354.7 * 1024 * 1024), "354.7 MiB"},
		{BytesFixed(3 << 30), "3.0 GiB"},
		{BytesFixed(5 << 40), "5.0 TiB"},
		{BytesFixed(2048 << 40), "2048.0 TiB"},
		{CountFloat(27202.4), "27,202"},
		{CountFloat(999.5), "1,000"},
		{CountFloat(-1234.5), "-1,235"},
		{CountFloat(-0.4), "0"},
		{CountFloat(math.MinInt64), "-9,223,372,036,854,775,808"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

func TestScale(t *testing.T) {
	for _, c := range []struct {
		in   float64
		div  float64
		name string
	}{
		{0, 1, "B"},
		{1023, 1, "B"},
		{1024, 1024, "KiB"},
		{5 << 30, 1 << 30, "GiB"},
		{1 << 60, 1 << 40, "TiB"},
	} {
		if div, name := Scale(c.in); div != c.div || name != c.name {
			t.Errorf("Scale(%v) = %v %q, want %v %q", c.in, div, name, c.div, c.name)
		}
	}
}

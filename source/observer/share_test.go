package observer

import "testing"

// TestParseShare reads a share of a core as a percentage or a fraction,
// and refuses what is not one.
func TestParseShare(t *testing.T) {
	for in, want := range map[string]float64{"1%": 0.01, "0.01": 0.01, " 2.5% ": 0.025, "0": 0, "100%": 1, "1": 1} {
		if got, err := ParseShare(in); err != nil || got != want {
			t.Errorf("ParseShare(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "%", "one", "-1%", "101%", "1.5", "1%%"} {
		if got, err := ParseShare(bad); err == nil {
			t.Errorf("ParseShare(%q) = %v, want an error", bad, got)
		}
	}
}

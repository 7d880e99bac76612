package observer

import (
	"errors"
	"strconv"
	"strings"
)

// ParseShare reads a share of a core, as --max-observer-cost takes it:
// "1%" or "0.01"; 0 is off.
func ParseShare(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, div = p, 100
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil:
		return 0, errors.New("want a share such as 1% or 0.01 (0: no limit)")
	case v < 0 || v/div > 1:
		return 0, errors.New("a share is 0 to 100% of a core")
	}
	return v / div, nil
}

package source

import (
	"errors"
	"strings"
	"time"
)

// ParseWhen reads a time the user typed (vkwatch recording's and
// replay's --from and --to, replay's g) as an offset of a run whose clock
// started at epoch: a clock time (the first at or after offset after),
// +DURATION from the start, or RFC 3339.
func ParseWhen(s string, epoch time.Time, after time.Duration) (time.Duration, error) {
	if d, ok := strings.CutPrefix(s, "+"); ok {
		v, err := time.ParseDuration(d)
		if err != nil {
			return 0, err
		}
		return v, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.Sub(epoch), nil
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		c, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		base := epoch.Add(after).Local()
		t := time.Date(base.Year(), base.Month(), base.Day(), c.Hour(), c.Minute(), c.Second(), 0, time.Local)
		if t.Before(base.Truncate(time.Second)) {
			t = t.AddDate(0, 0, 1) // past midnight
		}
		return t.Sub(epoch), nil
	}
	return 0, errors.New("want a clock time (03:00), +DURATION from the start (+90m) or RFC 3339")
}

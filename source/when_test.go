package source

import (
	"testing"
	"time"
)

func TestParseWhen(t *testing.T) {
	epoch := time.Date(2026, 12, 1, 22, 50, 0, 0, time.Local)
	for _, c := range []struct {
		in    string
		after time.Duration
		want  time.Duration
	}{
		{"03:00", 0, 4*time.Hour + 10*time.Minute}, // past midnight
		{"23:00:30", 0, 10*time.Minute + 30*time.Second},
		{"22:50", 0, 0},
		{"22:55", 10 * time.Minute, 24*time.Hour + 5*time.Minute}, // the first 22:55 after 23:00
		{"+90m", 0, 90 * time.Minute},
		{epoch.Add(time.Hour).UTC().Format(time.RFC3339), 0, time.Hour},
	} {
		got, err := ParseWhen(c.in, epoch, c.after)
		if err != nil || got != c.want {
			t.Errorf("ParseWhen(%q, after %s) = %s, %v; want %s", c.in, c.after, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "3 am", "25:00", "+soon"} {
		if _, err := ParseWhen(bad, epoch, 0); err == nil {
			t.Errorf("ParseWhen(%q) took it", bad)
		}
	}
}

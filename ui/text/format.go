package text

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/units"
)

// NA is how every absent value is shown: absent is not zero.
const NA = "n/a"

// Sig3 and Bytes are the house formatters (source/units), so a size on
// screen reads as it does in the bench table and the report.
func Sig3(v float64) string { return units.Sig3(v) }

// Bytes renders a byte count in binary units, e.g. "12.3 MiB".
func Bytes(n int64) string { return units.Bytes(n) }

// OptBytes renders an optional byte count.
func OptBytes(o source.Opt[int64]) string {
	if !o.OK {
		return NA
	}
	return units.Bytes(o.V)
}

// OptDelta renders an optional signed byte difference, e.g. "+3.1 MiB".
func OptDelta(o source.Opt[int64]) string {
	if !o.OK {
		return NA
	}
	if o.V >= 0 {
		return "+" + units.Bytes(o.V)
	}
	return units.Bytes(o.V)
}

// Rate renders operations per second with k/M suffixes, e.g. "12.3k".
func Rate(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 999.5:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a < 999.5e3:
		return Sig3(v/1e3) + "k"
	case a < 999.5e6:
		return Sig3(v/1e6) + "M"
	default:
		return Sig3(v/1e9) + "G"
	}
}

// OptRate renders an optional rate.
func OptRate(o source.Opt[float64]) string {
	if !o.OK {
		return NA
	}
	return Rate(o.V)
}

// Latency renders a PING round trip in µs/ms/s with three significant
// digits, so 120µs and 1.20ms line up by eye.
func Latency(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Microsecond:
		return "<1µs"
	case d < 999500*time.Nanosecond:
		return strconv.FormatInt(int64((d+500*time.Nanosecond)/time.Microsecond), 10) + "µs"
	case d < 999500*time.Microsecond:
		return Sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return Sig3(float64(d)/float64(time.Second)) + "s"
	}
}

// Elapsed renders a wall-clock span (save durations, ETAs): tenths of a
// second while short, then minutes and seconds.
func Elapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	d = d.Round(time.Second)
	h := d / time.Hour
	mnt := (d % time.Hour) / time.Minute
	s := (d % time.Minute) / time.Second
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, mnt, s)
	}
	return fmt.Sprintf("%dm%02ds", mnt, s)
}

// OptElapsed renders an optional span.
func OptElapsed(o source.Opt[time.Duration]) string {
	if !o.OK {
		return NA
	}
	return Elapsed(o.V)
}

// OptCount renders an optional count.
func OptCount(o source.Opt[int64]) string {
	if !o.OK {
		return NA
	}
	return units.Count(o.V)
}

// OrNA returns s, or n/a when s is empty.
func OrNA(s string) string {
	if s == "" {
		return NA
	}
	return s
}

// SamplingNote says how often INFO samples a server: "INFO every 1s,
// 200ms while saving" when one at rest is sampled less often (rest) than
// one that saves or is about to (fine, which when is about).
func SamplingNote(rest, fine time.Duration, when string) string {
	if fine <= 0 || rest <= fine {
		return "INFO every " + max(rest, fine).String()
	}
	return "INFO every " + rest.String() + ", " + fine.String() + " " + when
}

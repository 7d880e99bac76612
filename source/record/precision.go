package record

import (
	"math"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// The precision a recorded sample keeps (format version 5). Most of a
// busy sample's bytes after compression were digits no instrument
// measured: ops/s as a float64 to 16 digits (a count of whole commands
// over an interval: one command in 200 ms is 5 ops/s), PING figures to
// the nanosecond (a loopback round trip jitters by microseconds, and the
// histogram's p50 and p99 are whole microseconds already), a save's
// elapsed time and ETA to the nanosecond (sampled every interval). Each is
// rounded, before a delta is taken, to well below what its instrument can
// tell apart; every other field (INFO's and /proc's integers, times,
// offsets) is written exactly as before.
const (
	opsStep     = 0.1                   // ops/s
	latencyStep = 100 * time.Nanosecond // PING: a tenth of a microsecond
	saveStep    = time.Millisecond      // a save's elapsed time and ETA
)

// recordedSample returns s at the precision a recording keeps. s is not
// changed: it is the watcher's.
func recordedSample(s *source.Sample) *source.Sample {
	c := *s
	c.OpsPerSec = roundOpt(c.OpsPerSec, opsStep)
	c.WriterOpsPerSec = roundOpt(c.WriterOpsPerSec, opsStep)
	c.Ping = roundLatency(c.Ping)
	c.Ping10s = roundLatency(c.Ping10s)
	if s.Save != nil {
		sv := *s.Save
		sv.Elapsed = sv.Elapsed.Round(saveStep)
		if eta, ok := sv.ETA.Get(); ok {
			sv.ETA = source.Some(eta.Round(saveStep))
		}
		c.Save = &sv
	}
	return &c
}

func roundOpt(o source.Opt[float64], step float64) source.Opt[float64] {
	if v, ok := o.Get(); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
		// Through the step's inverse, so 0.1 steps print as 12.3 and
		// not as 12.300000000000001.
		inv := 1 / step
		return source.Some(math.Round(v*inv) / inv)
	}
	return o
}

func roundLatency(l source.Latency) source.Latency {
	l.Min = l.Min.Round(latencyStep)
	l.P50 = l.P50.Round(latencyStep)
	l.P99 = l.P99.Round(latencyStep)
	l.Max = l.Max.Round(latencyStep)
	l.InFlight = l.InFlight.Round(latencyStep)
	return l
}

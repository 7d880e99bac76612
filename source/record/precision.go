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
// offsets) is written exactly as before. (Variables, not constants, so
// that a benchmark can try others.)
var (
	opsStep     = 0.1                   // ops/s
	latencyStep = 100 * time.Nanosecond // PING: a tenth of a microsecond
	saveStep    = time.Millisecond      // a save's elapsed time and ETA
)

// offsetStep is the precision of t, a sample's offset and a save's start:
// exact so far.
var offsetStep = time.Nanosecond

// recordedSample returns s at the precision a recording keeps. s is not
// changed: it is the watcher's.
func recordedSample(s *source.Sample) *source.Sample {
	c := *s
	roundSample(&c)
	if s.Save != nil {
		sv := *s.Save
		roundSave(&sv, s.Offset)
		c.Save = &sv
	}
	return &c
}

// roundSample rounds s's own figures in place (not its Save, which it
// shares with the watcher's sample).
func roundSample(s *source.Sample) {
	if off := s.Offset.Round(offsetStep); off != s.Offset {
		s.Offset, s.At = off, s.At.Add(off-s.Offset)
	}
	s.OpsPerSec = roundOpt(s.OpsPerSec, opsStep)
	s.WriterOpsPerSec = roundOpt(s.WriterOpsPerSec, opsStep)
	s.Ping = roundLatency(s.Ping)
	s.Ping10s = roundLatency(s.Ping10s)
}

// roundSave rounds a save's progress, seen by a sample at offset, in
// place. Its elapsed time is kept exact when it is offset less its start,
// as the watcher's always is: a version 6 delta then leaves it out.
func roundSave(sv *source.SaveProgress, offset time.Duration) {
	if sv.Elapsed == offset-sv.Started {
		sv.Started = sv.Started.Round(offsetStep)
		sv.Elapsed = offset.Round(offsetStep) - sv.Started
	} else {
		sv.Elapsed = sv.Elapsed.Round(saveStep)
	}
	if eta, ok := sv.ETA.Get(); ok {
		sv.ETA = source.Some(eta.Round(saveStep))
	}
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

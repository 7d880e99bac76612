package record

import (
	"math"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// The precision a recorded sample keeps (format version 5, made coarser
// in 7). Most of a busy sample's bytes after compression were digits no
// instrument measured: ops/s as a float64 to 16 digits (a count of whole
// commands over an interval: one command in 200 ms is 5 ops/s), PING
// figures to the nanosecond (a loopback round trip jitters by
// microseconds, and the histogram's p50 and p99 are whole microseconds
// already), a save's ETA to the nanosecond (an estimate, sampled every
// interval), and every time of a sample to the nanosecond or microsecond:
// t and the other offsets (the sampler's reading of its clock when an
// INFO reply came in, which the reply's own trip and the goroutine's
// wake-up blur by tenths of a millisecond and more) and INFO's
// server_time_usec (the server's clock when it wrote the reply: as blurred
// as seen from here, and read by vkwatch in whole seconds). Each is
// rounded, before a delta is taken, to below what its instrument can tell
// apart; every other field (INFO's and /proc's integers) is written
// exactly.
const (
	// opsStep: whole ops/s, finer than one command for any interval up to
	// a second; opsStepSlow for longer intervals.
	opsStep     = 1.0
	opsStepSlow = 0.1
	latencyStep = time.Microsecond // PING
	saveStep    = time.Millisecond // a save's ETA (and elapsed time, where not derived)
	// offsetStep is the precision of t, a sample's offset and a save's
	// start.
	offsetStep = time.Microsecond
	// serverTimeStep is server_time_usec's, in its microseconds.
	serverTimeStep = 1000
)

// opsStepFor is the ops/s step of a recording whose header says its
// sampling interval is interval (empty when it does not say).
func opsStepFor(interval string) float64 {
	if d, err := time.ParseDuration(interval); err == nil && d > time.Second {
		return opsStepSlow
	}
	return opsStep
}

// recordedSample returns s at the precision a recording keeps (with an
// interval of a second or less). s is not changed: it is the watcher's.
func recordedSample(s *source.Sample) *source.Sample {
	c := *s
	roundSample(&c, opsStep)
	if s.Save != nil {
		sv := s.Save.WithoutCurve()
		roundSave(&sv, s.Offset)
		c.Save = &sv
	}
	return &c
}

// roundSample rounds s's own figures in place (not its Save, which it
// shares with the watcher's sample), ops/s to ops.
func roundSample(s *source.Sample, ops float64) {
	if off := s.Offset.Round(offsetStep); off != s.Offset {
		s.Offset, s.At = off, s.At.Add(off-s.Offset)
	}
	s.OpsPerSec = roundOpt(s.OpsPerSec, ops)
	s.WriterOpsPerSec = roundOpt(s.WriterOpsPerSec, ops)
	s.Ping = roundLatency(s.Ping)
	s.Ping10s = roundLatency(s.Ping10s)
	if v, ok := s.Info.ServerTimeUsec.Get(); ok && v >= 0 {
		// Down, not to the nearest: its whole seconds stay the server's.
		s.Info.ServerTimeUsec.V = v / serverTimeStep * serverTimeStep
	}
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
	// Min down and max up, so that they still bound p50 and p99.
	l.Min = roundFigures(l.Min.Round(latencyStep), latencyFigures, 0)
	l.P50 = l.P50.Round(latencyStep)
	l.P99 = l.P99.Round(latencyStep)
	l.Max = roundFigures(l.Max.Round(latencyStep), latencyFigures, 1)
	l.InFlight = roundFigures(l.InFlight.Round(latencyStep), latencyFigures, 0.5)
	return l
}

// latencyFigures is how many significant figures a PING's min, max and
// in-flight age keep: the probe's histogram's own (probeHistDigits in
// source), to which its p50 and p99 are already resolved.
const latencyFigures = 2

// roundFigures rounds d, a whole number of latencySteps, to n significant
// figures of them: up by the fraction up of the last figure's unit (0
// down, 1 up, 0.5 to the nearest).
func roundFigures(d time.Duration, n int, up float64) time.Duration {
	u := d / latencyStep
	p := time.Duration(1)
	for lim := time.Duration(pow10[n]); u/p >= lim; p *= 10 {
	}
	add := time.Duration(up * float64(p))
	if add >= p {
		add = p - 1
	}
	return (u + add) / p * p * latencyStep
}

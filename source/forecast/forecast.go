// Package forecast predicts what the next fork save of a server will cost
// in copy-on-write, before it runs, and says what the prediction rests on.
//
// Copy-on-write is the pages the parent writes while the save child still
// shares them. For writes spread uniformly over P pages, n writes leave
// P (1 - e^(-n/P)) pages written at least once; a write can touch more than
// one page (a key's dict entry, its value object and the value's bytes) or
// fewer (writes that fall on the same pages), so the model carries a factor
// k of pages dirtied per write:
//
//	cow = used (1 - e^(-k w t / P))    P = used / page size
//
// with w the write rate and t the save's duration. k is calibrated from the
// node's own saves, k = -ln(1 - cow/used) P / (w t), and applied to the
// write rate now and the duration the last save's keys per second give for
// today's key count. Before any save is seen there is no k: the forecast is
// then the uniform-write upper bound, with PagesPerWrite pages per write
// and BoundMargin times the writes expected over an estimated duration,
// beside the worst case, every page copied.
// Each forecast names its basis.
//
// It is pure arithmetic on samples and reports: no I/O.
package forecast

import (
	"fmt"
	"math"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// PageSize is the page a write copies: 4 KiB, the base page of x86-64 and
// most arm64 kernels. Transparent huge pages would make it 2 MiB; Redis
// and Valkey turn them off for themselves (disable-thp yes, the default).
const PageSize = 4096

// PagesPerWrite is how many distinct pages the uniform upper bound lets
// one write dirty. Overwriting a key's value writes its dict entry (the
// value pointer), the value object (its LRU clock, then the new object in
// the chunk the old one freed) and the value's bytes: three allocations
// that lie on unrelated pages. Measured here (Redis 7.0.15, 1,000,000 keys
// of 300 B, one writer), a save copied 1.1-1.3 pages per write: a bound of
// one page per write, the plain formula, fell below the actual.
const PagesPerWrite = 3

// BoundMargin is how many times the expected writes the upper bound
// counts: the write rate before a save and the save's duration are both
// estimates, and the bound must hold when they err short. Measured here
// on a quiet machine (Redis 7.0.15, 1,000,000 keys, one writer), the rate
// of the seconds before a save read 11,500 SETs/s for a save that ran at
// 18,000, and the bound without a margin fell 0.3 MiB below the actual
// (285.8 against 286.1 MiB); saves of the same dataset took 3.15-3.90 s.
const BoundMargin = 1.5

// Basis names what a forecast rests on, on screen and in output.
type Basis string

const (
	// Calibrated: k from this node's own last fork save.
	Calibrated Basis = "calibrated"
	// Bound: no save seen yet: the uniform-write upper bound.
	Bound Basis = "uniform bound"
	// Worst: no write rate known: every page copied.
	Worst Basis = "worst case"
	// Forkless: the server saves without a child, nothing to copy.
	Forkless Basis = "forkless"
)

// Calibration is what one finished fork save taught about its node.
type Calibration struct {
	// K is the pages dirtied per write; Saturated says the save copied
	// (nearly) every page, so K is only a lower bound.
	K         float64
	Saturated bool
	// KeysPerSec is the save's throughput, 0 when unknown.
	KeysPerSec float64
	// What it was computed from.
	Used    int64   // used_memory just before the save
	COW     int64   // the save's copy-on-write
	Rate    float64 // writes per second before the save
	Seconds float64 // the save's duration
	Keys    int64   // keys the save wrote (current_save_keys_total)
	Started time.Time
}

// saturation is the share of used memory past which a save counts as
// having copied everything: -ln(1-f) grows without bound as f nears 1.
const saturation = 0.98

// rate is the write rate a report knew before the save: the server's
// ops/s (every client's commands, as the monitor sees them now), else
// vkwatch's own writers'. Calibrating against the rate before the save,
// not the rate during it, measures k against what a forecast made before
// the next save can know: the slowdown a fork brings is inside k.
func rate(r *source.SaveReport) (float64, bool) {
	if v, ok := r.OpsBefore.Get(); ok && v > 0 {
		return v, true
	}
	if v, ok := r.WriterOpsBefore.Get(); ok && v > 0 {
		return v, true
	}
	return 0, false
}

// Calibrate learns from a finished fork save's report. It reports false
// for a report that cannot calibrate anything: not a fork save, not ok,
// no used_memory before it, or no copy-on-write figure. A save without
// writes before it, or too short to time, still gives keys per second
// when it can, with K 0.
func Calibrate(r *source.SaveReport) (Calibration, bool) {
	if r == nil || r.Kind != source.SaveFork || r.Status != "ok" {
		return Calibration{}, false
	}
	used, ok := r.BaseUsed.Get()
	if !ok || used <= 0 {
		return Calibration{}, false
	}
	cow, ok := r.COW.Get()
	if !ok {
		cow, ok = r.PeakCOW.Get()
	}
	if !ok {
		return Calibration{}, false
	}
	c := Calibration{Used: used, COW: cow, Started: r.StartedAt}
	c.Seconds = r.Observed.Seconds()
	if s, ok := r.ServerSeconds.Get(); ok && float64(s) > c.Seconds {
		// A save shorter than a sampling interval is observed as 0 s.
		c.Seconds = float64(s)
	}
	if k, ok := r.KeysTotal.Get(); ok && k > 0 && c.Seconds > 0 {
		c.Keys, c.KeysPerSec = k, float64(k)/c.Seconds
	}
	w, ok := rate(r)
	if !ok || c.Seconds <= 0 {
		return c, true
	}
	c.Rate = w
	f := float64(cow) / float64(used)
	if f >= saturation {
		f, c.Saturated = saturation, true
	}
	pages := float64(used) / PageSize
	c.K = -math.Log(1-f) * pages / (w * c.Seconds)
	return c, true
}

// Now is what is known of a node at the moment of the forecast.
type Now struct {
	Used, RSS source.Opt[int64]
	// Rate is the write rate now, ops/s (the mean of the last seconds).
	Rate source.Opt[float64]
	// Peak is the highest write rate of those seconds (between two
	// samples): the upper bound's, which must hold when the save meets a
	// faster stride than the mean. Absent: Rate.
	Peak source.Opt[float64]
	// Keys is the key count now; absent: the last save's, scaled by
	// used_memory.
	Keys source.Opt[int64]
	// SaveDelay is rdb-key-save-delay (microseconds per key).
	SaveDelay source.Opt[int64]
	// LastSaveSeconds is rdb_last_bgsave_time_sec: a save the server ran
	// before vkwatch watched it. -1 or absent: none.
	LastSaveSeconds source.Opt[int64]
	// AllocatorFree is allocator_rss_bytes: pages the allocator holds
	// resident and unused. Given back while a child shares them, they
	// are counted in the save's copy-on-write (see AllocatorFree in
	// Forecast). Absent: none assumed.
	AllocatorFree source.Opt[int64]
	// Forkless: bgsave-default-method is forkless, and no save since it
	// was set has forked anyway (the server falls back to a fork when a
	// loaded module cannot save forklessly: Node.Forecast clears it then).
	Forkless bool
}

// NowOf reads Now from a sample; rate and peak are the write rates to
// assume (the caller's mean and highest of the last seconds of ops/s).
// rdb_last_bgsave_time_sec estimates a fork save's length only when the
// last save was no forkless one (that runs longer).
func NowOf(s *source.Sample, rate, peak source.Opt[float64]) Now {
	now := Now{
		Used: s.Info.UsedMemory, RSS: s.Info.RSS, Rate: rate, Peak: peak,
		SaveDelay:     s.Config.RDBKeySaveDelay,
		AllocatorFree: s.Info.AllocatorRSS,
		Forkless:      s.Config.Method == "forkless",
	}
	if s.Info.RDBLastType != "forkless" {
		now.LastSaveSeconds = s.Info.RDBLastTime
	}
	return now
}

// Forecast is the predicted cost of the next fork save.
type Forecast struct {
	Basis Basis
	// COW is the forecast copy-on-write: the calibrated figure, else the
	// bound, else the worst case (see Basis).
	COW int64
	// Duration is the expected length of the save, DurationFrom says how
	// it was found ("last save: 101,000 keys/s", "estimated: ...").
	Duration     time.Duration
	DurationFrom string
	// Bound is the uniform upper bound (PagesPerWrite pages per write),
	// absent without a write rate; Worst is every page copied: the
	// larger of used_memory and RSS.
	Bound source.Opt[int64]
	Worst int64
	// Footprint is what the host pays at the save's peak: RSS + COW.
	Footprint source.Opt[int64]
	// Rate is the write rate the forecast assumed.
	Rate source.Opt[float64]
	// AllocatorFree is the part of Bound that is not writes: the pages
	// the allocator held resident and unused (allocator_rss_bytes). The
	// allocator gives such pages back over seconds (jemalloc's decay);
	// one it gives back while the child shares it stays in the child
	// alone, where rdb_last_cow_size counts it as copied. The host pays
	// nothing for it: the parent's RSS falls by as much. Measured here
	// (Redis 7.0.15, 1,000,000 keys just preloaded), an idle save 6 s
	// after the preload copied 5.0 MiB, 4.0 MiB of it the allocator's
	// pages given back during the save; the same save 15 s after, 1.0 MiB.
	AllocatorFree source.Opt[int64]
}

// assumedBytesPerSec is the save speed assumed before any save was timed:
// a slow disk's, so the duration, and the bound with it, err long.
// This machine's saves of 375 MiB took 2-10 s (38-190 MiB/s) as load
// came and went.
const assumedBytesPerSec = 32 << 20

// assumedOwnCOW is the least a fork save is assumed to copy before the
// node's first save shows it: the server's own writes while the child
// holds its pages (cron, clients' buffers, the monitor's INFO and PING).
// Idle Redis 7.0.15 saves copied 220-260 KiB empty and about 1 MiB with
// 375 MiB of data on this machine.
const assumedOwnCOW = 2 << 20

// assumedBytesPerKey turns used memory into a key count when none is
// known, to price rdb-key-save-delay: small, so the delay errs long.
const assumedBytesPerKey = 64

// Predict forecasts the next fork save of a node from what is known now
// and its calibration (nil: no save seen). It reports false when
// used_memory is unknown: there is nothing to scale.
func Predict(now Now, cal *Calibration) (Forecast, bool) {
	used, ok := now.Used.Get()
	if !ok || used <= 0 {
		return Forecast{}, false
	}
	worst := max(used, now.RSS.Or(0))
	f := Forecast{Worst: worst, Rate: now.Rate}
	footprint := func(cow int64) source.Opt[int64] {
		if rss, ok := now.RSS.Get(); ok {
			return source.Some(rss + cow)
		}
		return source.Opt[int64]{}
	}
	if now.Forkless {
		f.Basis, f.Footprint = Forkless, footprint(0)
		return f, true
	}
	f.Duration, f.DurationFrom = duration(now, cal)
	pages := float64(used) / PageSize
	w, haveRate := now.Rate.Get()
	if haveRate && w >= 0 {
		n := PagesPerWrite * BoundMargin * max(w, now.Peak.Or(0)) * f.Duration.Seconds()
		bound := int64(pages * (1 - math.Exp(-n/pages)) * PageSize)
		// The server writes pages of its own while a child holds them
		// (its cron, clients' buffers, the monitor's own INFO and PING):
		// a save with no writes before it still copied about 1 MiB here.
		// What such a save of this node copied is part of the bound, or
		// an idle server's "upper bound" of 0 B is below every save.
		if cal != nil && cal.Rate == 0 {
			bound = max(bound, cal.COW)
		}
		if cal == nil {
			// Before its first save nothing says what the node's own
			// writes copy: assume what idle saves copied here, doubled.
			bound = max(bound, assumedOwnCOW)
		}
		if free, ok := now.AllocatorFree.Get(); ok && free > 0 {
			// Pages the allocator may give back during the save count as
			// copied whether or not anything writes.
			f.AllocatorFree, bound = source.Some(free), bound+free
		}
		f.Bound = source.Some(min(bound, worst))
	}
	switch {
	case cal != nil && cal.K > 0 && haveRate && w >= 0:
		f.Basis = Calibrated
		f.COW = int64(float64(used) * (1 - math.Exp(-cal.K*w*f.Duration.Seconds()/pages)))
		if cal.Saturated {
			// k is a lower bound: the save copied everything, and a
			// faster or longer one can only do the same.
			f.COW = max(f.COW, int64(float64(cal.COW)*float64(used)/float64(cal.Used)))
		}
	case f.Bound.OK:
		f.Basis, f.COW = Bound, f.Bound.V
	default:
		f.Basis, f.COW = Worst, worst
	}
	f.Footprint = footprint(f.COW)
	return f, true
}

// duration is the expected length of the next save and where it came
// from: the last save's keys per second on today's key count; else that
// save's length scaled by used_memory; else an estimate.
func duration(now Now, cal *Calibration) (time.Duration, string) {
	used := now.Used.V
	if cal != nil && cal.KeysPerSec > 0 {
		keys, ok := now.Keys.Get()
		from := "last save: %s keys/s"
		if !ok {
			keys = int64(float64(cal.Keys) * float64(used) / float64(cal.Used))
			from = "last save: %s keys/s, keys scaled by used_memory"
		}
		return secs(float64(keys) / cal.KeysPerSec), fmt.Sprintf(from, count(cal.KeysPerSec))
	}
	if cal != nil && cal.Seconds > 0 {
		return secs(cal.Seconds * float64(used) / float64(cal.Used)), "last save's length, scaled by used_memory"
	}
	d := float64(used) / assumedBytesPerSec
	from := fmt.Sprintf("estimated: %d MiB/s assumed", assumedBytesPerSec>>20)
	if s, ok := now.LastSaveSeconds.Get(); ok && s >= 0 {
		// The server's own last save, before vkwatch watched: one second
		// at least, the field's resolution.
		d, from = float64(max(s, 1)), "estimated: rdb_last_bgsave_time_sec"
	}
	if delay, ok := now.SaveDelay.Get(); ok && delay > 0 {
		keys, ok := now.Keys.Get()
		if !ok {
			keys = used / assumedBytesPerKey
		}
		d = max(d, float64(keys)*float64(delay)/1e6)
		from = "estimated: rdb-key-save-delay x keys"
	}
	return secs(d), from
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// count prints an integer with thousands separators: 27,202.
func count(v float64) string {
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Error is (forecast - actual) / actual, the signed relative error; false
// when actual is 0.
func Error(forecast, actual int64) (float64, bool) {
	if actual == 0 {
		return 0, false
	}
	return float64(forecast-actual) / float64(actual), true
}

// Mean merges the calibrations of several saves of one node into one:
// the mean of their k and of their keys per second, the latest's figures
// otherwise. Saturated when any was (its k is then a lower bound). False
// for none.
func Mean(cs []Calibration) (Calibration, bool) {
	if len(cs) == 0 {
		return Calibration{}, false
	}
	out := cs[len(cs)-1]
	var k, kps float64
	var nk, nkps int
	for _, c := range cs {
		if c.K > 0 {
			k += c.K
			nk++
		}
		if c.KeysPerSec > 0 {
			kps += c.KeysPerSec
			nkps++
		}
		out.Saturated = out.Saturated || c.Saturated
	}
	out.K, out.KeysPerSec = 0, 0
	if nk > 0 {
		out.K = k / float64(nk)
	}
	if nkps > 0 {
		out.KeysPerSec = kps / float64(nkps)
	}
	return out, true
}

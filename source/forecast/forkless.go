package forecast

import (
	"fmt"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// NoForklessYet is what a forkless forecast says before the node's first
// forkless save: nothing to forecast from, and nothing is assumed.
const NoForklessYet = "no forkless save seen yet"

// ForklessSave is what one finished forkless save showed of its node: its
// speed, and the writers it held up at the write rate then. A forkless
// save copies no pages; what it costs is a longer save and writers that
// wait for keys its thread still holds (see VALKEY.md), so that is what
// the next one's forecast is made of.
type ForklessSave struct {
	// Keys is current_save_keys_total, Seconds the save's length (the
	// longer of observed and rdb_last_bgsave_time_sec), KeysPerSec the
	// two together.
	Keys       int64
	Seconds    float64
	KeysPerSec float64
	// Used is used_memory just before it: today's key count is its Keys
	// scaled by used_memory when no key count is known.
	Used int64
	// Blocked is the most writers it held up at once, above the level
	// outside it (SaveReport.BlockedWriters); Rate the write rate before
	// it (the server's ops/s, else vkwatch's writers'). Each absent where
	// it was not measured.
	Blocked source.Opt[int64]
	Rate    source.Opt[float64]
	// MemRise is the server's own memory rise during it (its peak
	// used_memory above the level before): no child, so this is all of
	// its memory cost.
	MemRise source.Opt[int64]
	Started time.Time
}

// LearnForkless learns from a finished forkless BGSAVE's report. It
// reports false for anything else, and for a save whose keys or length
// were not seen (its speed is then unknown): a sync, a fork save, one
// that did not end ok.
func LearnForkless(r *source.SaveReport) (ForklessSave, bool) {
	if r == nil || r.Kind != source.SaveForkless || r.Status != source.StatusOK {
		return ForklessSave{}, false
	}
	keys, ok := r.KeysTotal.Get()
	secs := r.Observed.Seconds()
	if s, sok := r.ServerSeconds.Get(); sok && float64(s) > secs {
		secs = float64(s)
	}
	used, uok := r.BaseUsed.Get()
	if !ok || keys <= 0 || secs <= 0 || !uok || used <= 0 {
		return ForklessSave{}, false
	}
	f := ForklessSave{Keys: keys, Seconds: secs, KeysPerSec: float64(keys) / secs, Used: used,
		Blocked: r.BlockedWriters(), MemRise: r.PeakUsedDelta, Started: r.StartedAt}
	if w, ok := rate(r); ok {
		f.Rate = source.Some(w)
	}
	return f, true
}

// ForklessForecast is the next forkless save of a node, from its last
// one: how long it will take at that save's keys a second, and the
// writers that save held up at the write rate then (a figure of that
// save's, not a prediction of a new one's).
type ForklessForecast struct {
	Duration     time.Duration
	DurationFrom string
	// Blocked and BlockedAtRate are the last forkless save's blocked
	// writers and the write rate they were blocked at; RateNow is the
	// write rate now, for a reader to set beside it.
	Blocked       source.Opt[int64]
	BlockedAtRate source.Opt[float64]
	RateNow       source.Opt[float64]
	// MemRise is the last forkless save's own memory rise.
	MemRise source.Opt[int64]
	// From is the save it rests on.
	From ForklessSave
}

// PredictForkless forecasts the next forkless save from now and the
// node's last forkless save; false without one (NoForklessYet) or
// without used_memory to scale its keys by.
func PredictForkless(now Now, last *ForklessSave) (ForklessForecast, bool) {
	used, ok := now.Used.Get()
	if last == nil || !ok || used <= 0 {
		return ForklessForecast{}, false
	}
	keys, kok := now.Keys.Get()
	from := "last forkless save: %s keys/s"
	if !kok {
		keys = int64(float64(last.Keys) * float64(used) / float64(last.Used))
		from = "last forkless save: %s keys/s, keys scaled by used_memory"
	}
	return ForklessForecast{
		Duration: secs(float64(keys) / last.KeysPerSec), DurationFrom: fmt.Sprintf(from, count(last.KeysPerSec)),
		Blocked: last.Blocked, BlockedAtRate: last.Rate, RateNow: now.Rate, MemRise: last.MemRise, From: *last,
	}, true
}

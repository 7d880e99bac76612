package result

import (
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
)

const mib = 1 << 20

// seedRun is a run with the seed article's kind of figures: cow and delta
// in MiB, save in seconds, ops/s, worst PING in ms, blocked writers.
func seedRun(n int, method string, cow, delta, save, ops, ping float64, blocked int64, limits ...Limit) Run {
	kind := source.SaveFork
	from := source.FromRDBLastCOW
	if method == "forkless" {
		kind, from = source.SaveForkless, source.FromNoChild
	}
	r := Run{
		N: n, Asked: method,
		Report: source.SaveReport{Kind: kind, Status: "ok", COW: source.Some(int64(cow * mib)), COWFrom: from,
			Observed: time.Duration(save * float64(time.Second)), ServerSeconds: source.Some(int64(save)),
			BlockedBefore: source.Some[int64](0), BlockedDuring: source.Some(blocked)},
		WriterOps: ops, WorstPing: time.Duration(ping * float64(time.Millisecond)), P99Ping: time.Duration(ping / 3 * float64(time.Millisecond)),
		ServerCOW: source.Some(int64(cow * mib)), ServerSeconds: source.Some(int64(save)),
		DatasetKeys: 3_000_000, UsedMemory: 1065 * mib, MemDelta: source.Some(int64(delta * mib)),
		Forecast: forecast.Forecast{Basis: forecast.Calibrated, COW: int64(cow * mib), Duration: 3 * time.Second},
		Limits:   limits,
	}
	return r
}

// memAvailable is a MemAvailable limit of gib GiB.
func memAvailable(gib float64) Limit {
	return Limit{Kind: risk.LimitMemAvailable, Cap: risk.Figure{Bytes: int64(gib * (1 << 30)), From: "/proc/meminfo MemAvailable"}}
}

// seedMethods is one server saved both ways, the seed's figures: fork
// 355 MiB of copy-on-write, forkless none but a longer save and fewer
// writes; the host has MemAvailable of gib GiB.
func seedMethods(gib float64) []Summary {
	lim := memAvailable(gib)
	fork := Summary{Server: 0, Addr: "10.0.0.7:6379", Method: "fork"}
	fl := Summary{Server: 0, Addr: "10.0.0.7:6379", Method: "forkless"}
	cows := []float64{354, 320, 367.5, 355, 352, 360, 374}
	for i := range 7 {
		fork.Runs = append(fork.Runs, seedRun(2*i+1, "fork", cows[i], cows[i]+1, 3.0, 27000+float64(i*60), 20+float64(i%3), 0, lim))
		fl.Runs = append(fl.Runs, seedRun(2*i+2, "forkless", 0, 9.9, 5.6, 23000+float64(i*10), 7+float64(i%2), 3, lim))
	}
	fork.Summarise()
	fl.Summarise()
	return []Summary{fork, fl}
}

package probe

import (
	"hash/fnv"
	"time"
)

// A fleet's probes and samplers of one interval would all fire on the same
// instant (their grids count from probeEpoch): a thousand PINGs and, every
// few seconds, a thousand INFO replies at once, in front of the saving
// node's PING due then. Each node has its place in the interval instead,
// from its address: stable, and spread evenly over the fleet.

// Spread is a node's place, from its address (FNV-1a, its bits mixed as
// MurmurHash3's finaliser does: addresses differing in a digit of the port
// differ in every bit): the top 16 bits place its PINGs (Phase), the low 16
// its samples.
func Spread(addr string) uint32 {
	f := fnv.New32a()
	f.Write([]byte(addr))
	h := f.Sum32()
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	return h ^ h>>16
}

const (
	// spreadGroups is about how many groups the PINGs of one interval
	// fall in: a thousand nodes PINGed every second, about 15 at a time.
	spreadGroups = 64
	// spreadQuantum: every phase is a multiple of it, the finest PING
	// interval (a saving node's), so that the PINGs at rest are sent in
	// the loop's wake-ups for the saving node's, and cost few of their own.
	spreadQuantum = int64(2 * time.Millisecond)
)

// Phase is where in every interval the PINGs of the node at spread fall,
// in ns after each multiple of the interval: 0 for intervals under two
// quanta (the default 2 ms, two servers or a saving node: one grid for
// all), else a multiple of the quantum below the interval.
func Phase(spread uint32, interval time.Duration) int64 {
	iv := int64(interval)
	if iv < 2*spreadQuantum {
		return 0
	}
	step := max(iv/spreadGroups/spreadQuantum, 1) * spreadQuantum
	slots := uint64(iv / step)
	return int64(uint64(spread>>16)*slots>>16) * step
}

// gridAfter is the first point of the grid of interval iv shifted by
// phase (phase + k*iv) strictly after t.
func gridAfter(t, iv, phase int64) int64 {
	if t < phase {
		return phase
	}
	return ((t-phase)/iv+1)*iv + phase
}

package spike

import (
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// Evidence is everything read about one spike: the INFO of the samples
// bounding it, what the server logged of itself after it, and for a local
// server what the kernel said of its main thread. The watcher gathers it;
// Explain reads it.
type Evidence struct {
	// Ping is the spike's round trip and Sent when the PING was sent (a
	// run clock offset, as During's readings).
	Ping, Sent time.Duration
	// Before and After are the INFO of the samples bounding the spike
	// (Detector's Ready); nil when there was no sample before it.
	Before, After *source.Info
	// Config is the server's settings as last read (CONFIG GET).
	Config source.SaveConfig

	// SlowLog holds the SLOWLOG entries newer than the last id read
	// before (all those read, the first time: SlowLogFirst), as the
	// server logged them; SlowLogErr says why SLOWLOG could not be read
	// (NOPERM...), and SlowLogRead is false when it was not asked.
	SlowLog      []SlowEntry
	SlowLogRead  bool
	SlowLogFirst bool
	SlowLogErr   string
	// Latency holds LATENCY LATEST's events that changed since the last
	// read (all of them the first time), read only where
	// latency-monitor-threshold is above 0; LatencyErr says why it could
	// not be read.
	Latency     []LatencyEvent
	LatencyRead bool
	LatencyErr  string
	// Stats is INFO latencystats by command name (lower case), read with
	// SLOWLOG; nil when not read (a server before 7.0 has none).
	Stats map[string]CommandStats

	// Local says the server runs on this host, so /proc was read for it
	// (ProcOK when it could be): its main thread's counters at Before's
	// and After's samples, and During, read while the PING waited
	// (oldest first). AnonHuge is AnonHugePages of the server's heap.
	Local                 bool
	ProcOK                bool
	ProcBefore, ProcAfter source.ProcSched
	During                []source.ProcSched
	AnonHuge              source.Opt[int64]

	// Stamped says the PING's answer was timed by the kernel's receive
	// timestamp, so vkwatch's own lateness could not lengthen it;
	// ProbeLate is how late vkwatch's probe loop ran at worst between
	// the bounding samples.
	Stamped   bool
	ProbeLate time.Duration
}

// SlowEntry is one SLOWLOG entry: never its arguments, which may hold
// values, only the command's name (and subcommand).
type SlowEntry struct {
	ID       int64
	Time     int64 // unix seconds of the server's clock, when it was logged
	Duration time.Duration
	// Command is the command's name, with its subcommand where it has
	// one ("DEBUG SLEEP", "CONFIG GET"), bounded.
	Command string
	// Client is the client's address and ClientName its name (SLOWLOG
	// gives both since 4.0).
	Client, ClientName string
}

// LatencyEvent is one row of LATENCY LATEST.
type LatencyEvent struct {
	Event       string
	Time        int64 // unix seconds of the server's clock, of the latest
	Latest, Max time.Duration
}

// CommandStats is one command's INFO latencystats line: the percentiles of
// its time since the server started (or since CONFIG RESETSTAT).
type CommandStats struct {
	P50, P99, P999 time.Duration
}

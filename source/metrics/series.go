package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
)

// The series, by Prometheus' conventions: base units (seconds, bytes) in
// the name, _total on counters, label values without spaces from closed
// sets, one address label (addr: the server's host:port as vkwatch names
// it), and series that keep their labels whatever the value (a status is
// an enum of 0/1 series, not a label of the figures). Each help text names
// the INFO field or /proc file the figure comes from. README.md beside
// this file lists them with the joins to redis_exporter.

var (
	lAddr     = []string{"addr"}
	lIn       = []string{"addr", "instrument"}
	lRunning  = []string{"addr", "kind", "method", "trigger"}
	lJob      = []string{"addr", "kind", "method"}
	lJobIn    = []string{"addr", "kind", "method", "instrument"}
	lJobState = []string{"addr", "kind", "method", "status"}
	lLimit    = []string{"addr", "limit"}

	descBuild = prometheus.NewDesc("vkwatch_build_info",
		"1, with the version of vkwatch that serves these series (as vkwatch --version says it), its VCS revision and Go version.",
		[]string{"version", "revision", "goversion"}, nil)
	descUp = prometheus.NewDesc("vkwatch_node_up",
		"1 while vkwatch's connection to the server answers INFO, 0 while vkwatch cannot reach it and retries.", lAddr, nil)
	descPing = prometheus.NewDesc("vkwatch_ping_duration_seconds",
		"PING round trips on vkwatch's own connection to the server since vkwatch began to watch it, timed every vkwatch_ping_interval_seconds and corrected for coordinated omission (a PING slower than the interval also counts the PINGs due meanwhile, as HdrHistogram's RecordCorrectedValue does). A native histogram of schema 3, with classic buckets at powers of two for servers that do not scrape native histograms.",
		lAddr, nil)
	descObserver = prometheus.NewDesc("vkwatch_observer_seconds_total",
		"Server time vkwatch's own commands took on the server (its PINGs, INFO, CONFIG GET, connections' set-up): vkwatch's own call counts of each command times the server's time per call of that command (INFO commandstats usec / calls over each span between two readings, about a minute apart). rate() of it is vkwatch's share of the server's main thread. Moves at each reading.", lAddr, nil)
	descPingInterval = prometheus.NewDesc("vkwatch_ping_interval_seconds",
		"How far apart vkwatch sends its PINGs to the server now: the resolution of vkwatch_ping_duration_seconds (a pause shorter than it may be missed).", lAddr, nil)
	descFootprint = prometheus.NewDesc("vkwatch_footprint_bytes",
		"Memory the host pays for the server: its resident pages (/proc/PID/statm) plus the save child's Private_Dirty (/proc/CHILD/smaps_rollup) with instrument proc; INFO used_memory_rss + current_cow_size with instrument info (a remote server).", lIn, nil)
	descCOW = prometheus.NewDesc("vkwatch_cow_bytes",
		"Copy-on-write of the running save child: its Private_Dirty (/proc/CHILD/smaps_rollup, read every sample) with instrument proc, INFO current_cow_size (refreshed by the server about once a second) with instrument info; 0 while no child runs.", lIn, nil)
	descSaving = prometheus.NewDesc("vkwatch_save_in_progress",
		"1 while a save, AOF rewrite or forkless sync runs on the server (INFO rdb_bgsave_in_progress, aof_rewrite_in_progress, slot_migration_fork_in_progress), else 0.", lAddr, nil)
	descProgress = prometheus.NewDesc("vkwatch_save_progress_ratio",
		"Progress of the running save, 0..1: INFO current_save_keys_processed / current_save_keys_total. Absent while no save runs.", lRunning, nil)
	descETA = prometheus.NewDesc("vkwatch_save_eta_seconds",
		"Seconds the running save still needs: INFO forkless_estimated_seconds_remaining where the server gives it, else from vkwatch's smoothed rate of current_save_keys_processed.", lRunning, nil)
	descElapsed = prometheus.NewDesc("vkwatch_save_elapsed_seconds",
		"How long the running save has run, from the first of vkwatch's samples that showed it.", lRunning, nil)
	descStalled = prometheus.NewDesc("vkwatch_save_stalled_seconds",
		"How long INFO current_save_keys_processed of the running save has stood still below current_save_keys_total: 0 while it moves, and once it reached the total (the server is writing out the file). The server reports progress about once a second.", lRunning, nil)

	descForecast = prometheus.NewDesc("vkwatch_forecast_cow_bytes",
		"Copy-on-write the next fork save is forecast to need, from the write rate (INFO total_commands_processed) and the node's last fork save (rdb_last_cow_size, used_memory); its basis in vkwatch_forecast_basis. Held during a save at its value before the save.", lAddr, nil)
	descBasis = prometheus.NewDesc("vkwatch_forecast_basis",
		"What vkwatch_forecast_cow_bytes rests on, as an enum: 1 for the basis in force, 0 for the others (calibrated: from this node's last fork save; uniform_bound: no save seen yet, an upper bound from the write rate; worst_case: no write rate, every page copied; forkless: no child).", []string{"addr", "basis"}, nil)
	descHeadroom = prometheus.NewDesc("vkwatch_fork_headroom_bytes",
		"Memory left under the limit if a fork save started now: the limit less what already counts against it and the copy-on-write expected (the larger of the last saves' and the forecast); negative when the fork would exceed it. By limit: mem_available (/proc/meminfo MemAvailable), cgroup (memory.max or memory.limit_in_bytes of the server's cgroup, less its usage), maxmemory (INFO maxmemory less used_memory), total_system_memory (INFO, less used_memory_rss; remote servers). Held during a save at its value before the save.", lLimit, nil)
	descLimit = prometheus.NewDesc("vkwatch_fork_limit_bytes",
		"The memory limit vkwatch_fork_headroom_bytes is measured against (MemAvailable, the cgroup's limit, INFO maxmemory or total_system_memory).", lLimit, nil)

	descLastStatus = prometheus.NewDesc("vkwatch_last_save_status",
		"How the latest finished save of each kind and method ended, as an enum: 1 for its status, 0 for the others. ok and err are INFO rdb_last_bgsave_status / aof_last_bgrewrite_status read for that save; cancelled: BGSAVE CANCEL; aborted: stopped by the server without failing (FLUSHALL); lost: the server restarted; unknown: the server said nothing.", lJobState, nil)
	descLastCOW = prometheus.NewDesc("vkwatch_last_save_cow_bytes",
		"Copy-on-write of the latest finished save as the server reports it (INFO rdb_last_cow_size / aof_last_cow_size), only for the save that set it; 0 for a forkless save, which has no child (the server keeps the last fork save's figure in rdb_last_cow_size).", lJob, nil)
	descLastPeak = prometheus.NewDesc("vkwatch_last_save_peak_cow_bytes",
		"Largest copy-on-write vkwatch saw during the latest finished save: the child's Private_Dirty (/proc/CHILD/smaps_rollup, instrument proc) or INFO current_cow_size (instrument info).", lJobIn, nil)
	descLastRise = prometheus.NewDesc("vkwatch_last_save_footprint_rise_bytes",
		"How far vkwatch_footprint_bytes rose during the latest finished save above its level just before it, by the same instrument.", lJobIn, nil)
	descLastFork = prometheus.NewDesc("vkwatch_last_save_fork_pause_seconds",
		"How long fork() blocked the server's main thread for the latest finished save (INFO latest_fork_usec, when total_forks shows it is this save's fork).", lJob, nil)
	descLastDur = prometheus.NewDesc("vkwatch_last_save_duration_seconds",
		"How long the latest finished save ran, as vkwatch's samples saw it.", lJob, nil)
	descLastEnd = prometheus.NewDesc("vkwatch_last_save_end_timestamp_seconds",
		"When the latest finished save ended (unix seconds).", lJob, nil)
	descLastPing = prometheus.NewDesc("vkwatch_last_save_ping_max_seconds",
		"Worst PING round trip during the latest finished save.", lJob, nil)
	descLastPingI = prometheus.NewDesc("vkwatch_last_save_ping_interval_seconds",
		"How far apart the PINGs of the latest finished save were (the longest interval among them): the resolution of vkwatch_last_save_ping_max_seconds.", lJob, nil)
	descSpikes = prometheus.NewDesc("vkwatch_ping_spikes_total",
		"PING spikes on vkwatch's own connection since vkwatch began to watch the server, by cause. A spike is "+source.SpikeRule+". "+
			"A spike counts once under each cause found for it (a fork and page faults: once under each), so the sum over causes may exceed the spikes. "+
			"The causes and their evidence: fork (INFO total_forks grew; latest_fork_usec), command (SLOWLOG, or LATENCY LATEST command events), "+
			"expire (expire_cycle_cpu_milliseconds), eviction (evicted_keys), lazyfree (lazyfree_pending_objects), defrag (total_active_defrag_time), "+
			"aof (aof_delayed_fsync), forkless (blocked_clients during a forkless save), latency_event (another LATENCY LATEST event), "+
			"and for a server on vkwatch's host, from /proc of its main thread: stopped (state T), cpu_wait (schedstat run delay), "+
			"page_faults (minflt, majflt, kernel time), kernel_wait (state D or a wait channel); vkwatch (its probe read the answer late); "+
			"not_seen (no count the server keeps saw it: the time was spent between vkwatch and the server); unexplained (what could not be checked). "+
			"Every cause starts at 0.", []string{"addr", "cause"}, nil)
	descSaves = prometheus.NewDesc("vkwatch_saves_total",
		"Saves vkwatch saw finish on the server since it began to watch it, by kind, method and status (as vkwatch_last_save_status). Every status starts at 0: for bgsave and aofrewrite by fork at once, for a forkless bgsave once the server's configuration shows forkless saves (bgsave-default-method, forkless-infrastructure-enabled), for other kinds once one is seen.", lJobState, nil)
)

// descs are every series' descriptions, for Describe.
var descs = []*prometheus.Desc{descBuild, descUp, descPing, descPingInterval, descObserver, descFootprint, descCOW,
	descSaving, descProgress, descETA, descElapsed, descStalled, descForecast, descBasis, descHeadroom,
	descLimit, descLastStatus, descLastCOW, descLastPeak, descLastRise, descLastFork, descLastDur,
	descLastEnd, descLastPing, descLastPingI, descSaves, descSpikes}

// statuses are the values of the status label, in order.
var statuses = []string{source.StatusOK, source.StatusErr, source.StatusCancelled, source.StatusAborted, "lost", "unknown"}

// statusLabel is a report's Status as a label: one of statuses (a status
// the server made up is "unknown": a label takes no server text).
func statusLabel(s string) string {
	switch s {
	case source.StatusOK, source.StatusErr, source.StatusCancelled, source.StatusAborted:
		return s
	case source.StatusLost:
		return "lost"
	}
	return "unknown"
}

// triggerLabel is who started a save, as a label.
func triggerLabel(t source.TriggerKind) string {
	switch t {
	case source.TriggerUser, source.TriggerReplica, source.TriggerAOF, source.TriggerSchedule, source.TriggerOther:
		return string(t)
	case source.TriggerSlotMigration:
		return "slotmigration"
	}
	return "unknown"
}

// bases are the values of the basis label, in order, with the forecast's
// bases they stand for.
var bases = []struct {
	label string
	basis forecast.Basis
}{
	{"calibrated", forecast.Calibrated},
	{"uniform_bound", forecast.Bound},
	{"worst_case", forecast.Worst},
	{"forkless", forecast.Forkless},
}

// limitLabel is a memory limit as a label.
func limitLabel(k risk.LimitKind) string {
	switch k {
	case risk.LimitMemAvailable:
		return "mem_available"
	case risk.LimitCgroup:
		return "cgroup"
	case risk.LimitMaxMemory:
		return "maxmemory"
	case risk.LimitSystemMemory:
		return "total_system_memory"
	}
	return "unknown"
}

// job is a kind of save and its method, as labels (source.SaveKind's Job
// and Method).
type job struct{ kind, method string }

func jobOf(k source.SaveKind) job {
	j := job{k.Job(), k.Method()}
	if j.kind == "" {
		j.kind = "unknown"
	}
	if j.method == "" {
		j.method = "unknown"
	}
	return j
}

// Every server can run these: their counters start at 0 at once.
var (
	forkSave    = jobOf(source.SaveFork)
	aofRewrite  = jobOf(source.SaveAOF)
	forklessJob = jobOf(source.SaveForkless)
)

// Package source is the vocabulary vkwatch has for Valkey and Redis
// servers: addresses and the connection options they make, INFO parsed,
// the samples, save reports and events, the fleet's topology. The packages
// under it do the work with these words: watch watches a server (samples
// INFO, sends the few commands a user may ask for), probe measures PING
// latency on a connection of its own, saves turns the stream of samples
// into save progress and save reports, and the rest build on them.
//
// None of them knows anything about drawing: none imports bubbletea or
// lipgloss. Everything they learn leaves them as an Event, which the UI
// draws, the recorder writes and bench summarises.
package source

import "time"

// Opt is a value a server may or may not report. Absent is not zero: a field
// an older server lacks is Opt{} and is shown as n/a, never as 0.
type Opt[T any] struct {
	V  T
	OK bool
}

// Some returns a present value.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, OK: true} }

// Get returns the value and whether it is present.
func (o Opt[T]) Get() (T, bool) { return o.V, o.OK }

// IsZero reports whether the value is absent: a recording leaves an
// absent figure out (omitzero), and a figure left out reads back absent.
func (o Opt[T]) IsZero() bool { return !o.OK }

// Or returns the value when present, else def.
func (o Opt[T]) Or(def T) T {
	if o.OK {
		return o.V
	}
	return def
}

// Info holds the INFO fields vkwatch uses, from the sections server, memory,
// stats, persistence and replication (and cluster, on connecting). Strings are empty and Opts are absent
// when the server does not report the field.
type Info struct {
	// server
	ServerName string     `json:"server_name,omitzero"` // "valkey" on Valkey; empty on Redis (it has no such field)
	Version    string     `json:"version,omitzero"`     // valkey_version on Valkey, redis_version elsewhere
	ProcessID  Opt[int64] `json:"process_id,omitzero"`
	Uptime     Opt[int64] `json:"uptime,omitzero"` // uptime_in_seconds: a drop means the server restarted
	// ServerTimeUsec is server_time_usec (Redis 7.0+, Valkey): the server's
	// own clock, which its `save` rules are timed by.
	ServerTimeUsec Opt[int64] `json:"server_time_usec,omitzero"`

	// replication
	Role string `json:"role,omitzero"`
	// ConnectedReplicas is connected_slaves (on a primary). Replicas holds
	// the first MaxReplicas of its slaveN lines, in order, and NumReplicas
	// how many lines there were (it may exceed MaxReplicas);
	// ReplicasWaitingBGSave counts the lines in state wait_bgsave among all
	// of them. A replica waiting for a full sync is what starts a save on
	// its primary (see Trigger).
	ConnectedReplicas     Opt[int64]           `json:"connected_replicas,omitzero"`
	Replicas              [MaxReplicas]Replica `json:"replicas,omitzero"`
	NumReplicas           int                  `json:"num_replicas,omitzero"`
	ReplicasWaitingBGSave int                  `json:"replicas_waiting_bg_save,omitzero"`

	// memory
	UsedMemory Opt[int64] `json:"used_memory,omitzero"`
	RSS        Opt[int64] `json:"rss,omitzero"` // used_memory_rss
	MaxMemory  Opt[int64] `json:"max_memory,omitzero"`
	// TotalSystemMemory is total_system_memory: the RAM of the server's
	// host as the server reads it, the one host figure a remote server gives.
	TotalSystemMemory Opt[int64] `json:"total_system_memory,omitzero"`
	// MemClientsReplicas is mem_clients_slaves: the memory of the
	// replicas' clients, their output buffers above all. During a full
	// sync the writes the replica will replay pile up here, in the parent,
	// beside the child's copy-on-write.
	MemClientsReplicas Opt[int64] `json:"mem_clients_replicas,omitzero"`
	// AllocatorRSS is allocator_rss_bytes: pages the allocator holds
	// resident but not in use (its dirty pages, freed and not yet given
	// back). It may give them back while a save child shares them: each
	// one is then the child's alone, and rdb_last_cow_size counts it,
	// though no write copied it. Absent without jemalloc.
	AllocatorRSS Opt[int64] `json:"allocator_rss,omitzero"`
	// LazyFreePending is lazyfree_pending_objects: objects waiting for the
	// lazy-free thread.
	LazyFreePending Opt[int64] `json:"lazyfree_pending,omitzero"`

	// stats
	TotalCommands  Opt[int64] `json:"total_commands,omitzero"` // total_commands_processed
	InstOps        Opt[int64] `json:"inst_ops,omitzero"`       // instantaneous_ops_per_sec (lags ~1.6 s)
	LatestForkUsec Opt[int64] `json:"latest_fork_usec,omitzero"`
	TotalForks     Opt[int64] `json:"total_forks,omitzero"`
	// The server's own counts of its background cycles, read to explain a
	// PING spike (package spike): the CPU its active expiry took
	// (expire_cycle_cpu_milliseconds, cumulative ms), the keys it expired
	// and how often a slow cycle hit its time cap; the keys evicted and
	// the time used_memory stayed above maxmemory
	// (total_eviction_exceeded_time, ms, 7.0+); active defrag's time
	// (total_active_defrag_time, ms).
	ExpireCycleCPUms Opt[int64] `json:"expire_cycle_cpu_ms,omitzero"`
	ExpiredKeys      Opt[int64] `json:"expired_keys,omitzero"`
	ExpireCapReached Opt[int64] `json:"expire_cap_reached,omitzero"` // expired_time_cap_reached_count
	EvictedKeys      Opt[int64] `json:"evicted_keys,omitzero"`
	EvictionOverMs   Opt[int64] `json:"eviction_over_ms,omitzero"` // total_eviction_exceeded_time
	DefragTimeMs     Opt[int64] `json:"defrag_time_ms,omitzero"`   // total_active_defrag_time

	// clients (asked only while a save runs or one is coming: see
	// watch's clientsWanted)
	// BlockedClients is blocked_clients: clients waiting for the server.
	// During a forkless save a write to a key the save thread has not
	// written yet waits for it, and counts here; so does any BLPOP and
	// the like, before and after the save too.
	BlockedClients Opt[int64] `json:"blocked_clients,omitzero"`

	// persistence
	Loading               Opt[int64]   `json:"loading,omitzero"`
	RDBInProgress         Opt[int64]   `json:"rdb_in_progress,omitzero"`  // rdb_bgsave_in_progress
	RDBCurrentTime        Opt[int64]   `json:"rdb_current_time,omitzero"` // rdb_current_bgsave_time_sec, -1 when none
	RDBLastTime           Opt[int64]   `json:"rdb_last_time,omitzero"`    // rdb_last_bgsave_time_sec, -1 when none
	RDBLastStatus         string       `json:"rdb_last_status,omitzero"`  // ok / err
	RDBSaves              Opt[int64]   `json:"rdb_saves,omitzero"`
	RDBChangesSinceSave   Opt[int64]   `json:"rdb_changes_since_save,omitzero"` // rdb_changes_since_last_save: what `save` rules count
	RDBLastSaveTime       Opt[int64]   `json:"rdb_last_save_time,omitzero"`     // rdb_last_save_time: unix seconds of the last successful save
	RDBLastCOW            Opt[int64]   `json:"rdb_last_cow,omitzero"`           // rdb_last_cow_size
	RDBCurrentType        string       `json:"rdb_current_type,omitzero"`       // Valkey 9.2+: fork / forkless / none
	RDBLastType           string       `json:"rdb_last_type,omitzero"`          // Valkey 9.2+
	ForklessETA           Opt[int64]   `json:"forkless_eta,omitzero"`           // forkless_estimated_seconds_remaining, -1 when none
	AOFEnabled            Opt[int64]   `json:"aof_enabled,omitzero"`
	AOFRewriteInProgress  Opt[int64]   `json:"aof_rewrite_in_progress,omitzero"`
	AOFRewriteScheduled   Opt[int64]   `json:"aof_rewrite_scheduled,omitzero"`
	AOFCurrentRewriteTime Opt[int64]   `json:"aof_current_rewrite_time,omitzero"`
	AOFLastRewriteTime    Opt[int64]   `json:"aof_last_rewrite_time,omitzero"`
	AOFLastStatus         string       `json:"aof_last_status,omitzero"` // aof_last_bgrewrite_status
	AOFLastCOW            Opt[int64]   `json:"aof_last_cow,omitzero"`
	AOFRewrites           Opt[int64]   `json:"aof_rewrites,omitzero"`     // aof_rewrites (7.0+): rewrites started since start
	AOFCurrentSize        Opt[int64]   `json:"aof_current_size,omitzero"` // aof_current_size, with aof_enabled: what auto-aof-rewrite compares
	AOFBaseSize           Opt[int64]   `json:"aof_base_size,omitzero"`    // aof_base_size: the size after the last rewrite
	CurrentCOW            Opt[int64]   `json:"current_cow,omitzero"`      // current_cow_size (live COW of the running child)
	CurrentCOWAge         Opt[int64]   `json:"current_cow_age,omitzero"`
	CurrentCOWPeak        Opt[int64]   `json:"current_cow_peak,omitzero"`
	CurrentForkPerc       Opt[float64] `json:"current_fork_perc,omitzero"`
	KeysProcessed         Opt[int64]   `json:"keys_processed,omitzero"` // current_save_keys_processed
	KeysTotal             Opt[int64]   `json:"keys_total,omitzero"`     // current_save_keys_total
	// SlotMigrationFork is slot_migration_fork_in_progress (Valkey 9.0+):
	// atomic slot migration forks a child of its own, which copies on
	// write like a save's but is no BGSAVE (rdb_bgsave_in_progress stays
	// 0). Absent on servers without it.
	SlotMigrationFork Opt[int64] `json:"slot_migration_fork,omitzero"`
	// AOFDelayedFsync is aof_delayed_fsync (reported with AOF on): how
	// often a write waited for an fsync still running (appendfsync
	// everysec).
	AOFDelayedFsync Opt[int64] `json:"aof_delayed_fsync,omitzero"`

	// cluster (asked on connecting only)
	ClusterEnabled Opt[int64] `json:"cluster_enabled,omitzero"` // cluster_enabled: 1 in cluster mode
}

// MaxReplicas is how many replicas of a primary Info keeps (a fixed array,
// so that parsing INFO does not allocate).
const MaxReplicas = 8

// Replica is one slaveN line of INFO replication on a primary:
// `slave0:ip=10.0.0.7,port=6380,state=wait_bgsave,offset=0,lag=0`.
type Replica struct {
	IP    string     `json:"ip,omitzero"`
	Port  Opt[int64] `json:"port,omitzero"`
	State string     `json:"state,omitzero"` // wait_bgsave (waiting for or receiving a full sync's RDB), send_bulk, online, ...
}

// SaveConfig is what CONFIG GET tells about how the server saves. Method is
// empty when the server has no bgsave-default-method setting (anything before
// Valkey 9.2): the UI shows n/a.
type SaveConfig struct {
	Method          string     `json:"method,omitzero"`             // bgsave-default-method: fork / forkless
	ForklessInfra   Opt[bool]  `json:"forkless_infra,omitzero"`     // forkless-infrastructure-enabled
	RDBKeySaveDelay Opt[int64] `json:"rdb_key_save_delay,omitzero"` // rdb-key-save-delay, microseconds per key
	// What tells who started a save (see Trigger): repl-diskless-sync (a
	// replica's full sync streams the RDB to its socket instead of a file),
	// save (the server's own schedule, "3600 1 300 100"; "" when it has
	// none) and auto-aof-rewrite-percentage / -min-size (when the server
	// rewrites its AOF by itself).
	ReplDisklessSync      Opt[bool]   `json:"repl_diskless_sync,omitzero"`
	SaveSchedule          Opt[string] `json:"save_schedule,omitzero"`
	AutoAOFRewritePerc    Opt[int64]  `json:"auto_aof_rewrite_perc,omitzero"`
	AutoAOFRewriteMinSize Opt[int64]  `json:"auto_aof_rewrite_min_size,omitzero"`
	// ReplicaBufHard, ReplicaBufSoft and ReplicaBufSoftSecs are the
	// replica class of client-output-buffer-limit: a replica whose output
	// buffer passes the hard limit, or stays past the soft one for the
	// seconds, is cut off, and its full sync starts over. 0 is no limit.
	ReplicaBufHard     Opt[int64] `json:"replica_buf_hard,omitzero"`
	ReplicaBufSoft     Opt[int64] `json:"replica_buf_soft,omitzero"`
	ReplicaBufSoftSecs Opt[int64] `json:"replica_buf_soft_secs,omitzero"`
	// DisableTHP is disable-thp (Redis 6.2+, Valkey; default yes): the
	// server turns transparent huge pages off for itself.
	DisableTHP Opt[bool] `json:"disable_thp,omitzero"`
	// What a spike's explanation rests on (package spike):
	// slowlog-log-slower-than (µs; a command at least this slow is in
	// SLOWLOG; negative: none is), latency-monitor-threshold (ms; 0: the
	// latency monitor is off, and vkwatch never turns it on) and
	// appendfsync (always, everysec, no).
	SlowlogSlowerThan       Opt[int64] `json:"slowlog_slower_than,omitzero"`
	LatencyMonitorThreshold Opt[int64] `json:"latency_monitor_threshold,omitzero"`
	AppendFsync             string     `json:"appendfsync,omitzero"`
	Err                     string     `json:"err,omitzero"` // why CONFIG GET failed (e.g. NOPERM), empty when it worked
}

// NodeID names a watched server for as long as vkwatch runs, whatever the
// layout shows or the topology does: a cluster node's 40-character node id
// when vkwatch learned it from the cluster, else the server's display
// address. Panes, fleet rows, the history store, reports and recordings are
// keyed by it, never by a position on screen, so a node keeps its history
// when it moves (a failover, a sort, a change of view).
type NodeID string

// Identity is what a server says about itself when vkwatch connects.
type Identity struct {
	Addr       string     `json:"addr,omitzero"`        // display form of the address, never with a password
	ServerName string     `json:"server_name,omitzero"` // "valkey" or "redis"
	Version    string     `json:"version,omitzero"`
	Role       string     `json:"role,omitzero"`
	ProcessID  Opt[int64] `json:"process_id,omitzero"`
	Local      bool       `json:"local,omitzero"` // loopback address or unix socket: /proc may be read
	// Cluster says the server runs in cluster mode (INFO cluster:
	// cluster_enabled:1): watching it alone shows one node of many, and
	// vkwatch --cluster ADDR would watch them all.
	Cluster bool `json:"cluster,omitzero"`
}

// Latency summarises PING round trips. Count is 0 when no PING completed.
// Durations are corrected for coordinated omission: when a PING takes longer
// than the probe interval, the PINGs that were due meanwhile are counted with
// the latency they would have seen.
type Latency struct {
	Count int64         `json:"count,omitzero"`
	Min   time.Duration `json:"min_ns,omitzero,format:nano"`
	P50   time.Duration `json:"p50_ns,omitzero,format:nano"`
	P99   time.Duration `json:"p99_ns,omitzero,format:nano"`
	Max   time.Duration `json:"max_ns,omitzero,format:nano"`
	// InFlight is the age of a PING sent and not yet answered when the
	// summary was taken (0 when none): a stall shows while it lasts. A
	// sample holds it once, in Ping (the interval's summary): its Ping10s,
	// the PINGs answered in the last 10 s, has none.
	InFlight time.Duration `json:"in_flight_ns,omitzero,format:nano"`
	// Interval is how far apart the PINGs were sent: the resolution of
	// these figures (a pause shorter than it may be missed). Of a merged
	// summary (a save's PINGs), the longest of its parts; 0 when unknown
	// (a recording made before it was kept).
	Interval time.Duration `json:"interval_ns,omitzero,format:nano"`
}

// Worst is the larger of Max and InFlight: what a chart of the worst PING of
// an interval should show.
func (l Latency) Worst() time.Duration {
	if l.InFlight > l.Max {
		return l.InFlight
	}
	return l.Max
}

// ProcMem is the memory of a local server read from /proc, beside INFO's
// figures. Absent fields mean the server is not local or /proc could not be read.
type ProcMem struct {
	// Cgroup names the memory cgroup the server runs in ("v2:/path" or
	// "v1:/path"), empty when none could be found; CgroupUsage and
	// CgroupLimit are its memory.current / memory.max (v2) or
	// memory.usage_in_bytes / memory.limit_in_bytes (v1). The limit is
	// absent when the cgroup sets none ("max", or v1's huge number). This
	// is what a container's OOM killer counts: the seed's second instrument.
	// The path is as /proc/PID/cgroup shows it to vkwatch (relative to
	// vkwatch's cgroup namespace); a v1 memory line wins over the v2 line
	// on a hybrid host (the memory controller is bound to one of them).
	// Read by procmem at every sample (about 40 us).
	Cgroup      string     `json:"cgroup,omitzero"`
	CgroupUsage Opt[int64] `json:"cgroup_usage,omitzero"`
	CgroupLimit Opt[int64] `json:"cgroup_limit,omitzero"`

	RSS               Opt[int64] `json:"rss,omitzero"`                 // server's VmRSS
	PSS               Opt[int64] `json:"pss,omitzero"`                 // server's Pss (smaps_rollup)
	ChildPID          Opt[int64] `json:"child_pid,omitzero"`           // the save child, while one runs
	ChildPrivateDirty Opt[int64] `json:"child_private_dirty,omitzero"` // child's Private_Dirty: its copy-on-write pages
	ChildPSS          Opt[int64] `json:"child_pss,omitzero"`
	// HostMemAvailable is MemAvailable of the host the server runs on
	// (/proc/meminfo): what a fork's copy-on-write can still take before
	// the kernel starts reclaiming or the OOM killer wakes.
	HostMemAvailable Opt[int64] `json:"host_mem_available,omitzero"`
	// THPKernel is the host's transparent huge page setting
	// (/sys/kernel/mm/transparent_hugepage/enabled: always, madvise or
	// never; empty when unread) and AnonHugePages the server's memory that
	// huge pages back now (its smaps_rollup). Read every 10 s: where huge
	// pages back the heap, one write during a save copies 2 MiB, not 4 KiB.
	THPKernel     string     `json:"thp_kernel,omitzero"`
	AnonHugePages Opt[int64] `json:"anon_huge_pages,omitzero"`
}

// ObserverCost is the server time vkwatch's own commands take (INFO,
// CONFIG GET, PING, the connections' set-up), priced by the server's own
// per-command time (INFO commandstats, read about once a minute) times
// vkwatch's own call counts (source/observer). Absent before the first
// reading, and on a server that refuses it.
type ObserverCost struct {
	// Seconds is the server time of vkwatch's commands from the start of
	// this watch up to ReadAt, the latest reading of commandstats (a
	// counter: it moves at each reading, never back).
	Seconds Opt[float64]  `json:"seconds,omitzero"`
	ReadAt  time.Duration `json:"read_at_ns,omitzero,format:nano"`
	// Share is that time per second over Window, the latest span between
	// two readings: a share of one core (0.001 is 1 ms a second).
	Share  Opt[float64]  `json:"share,omitzero"`
	Window time.Duration `json:"window_ns,omitzero,format:nano"`
}

// Sample is one reading of one server.
type Sample struct {
	Seq uint64 `json:"seq,omitzero"`
	// Offset is since the monitor's Clock epoch (monotonic), At the Clock
	// epoch + Offset: wall time that cannot go backwards. A recording holds
	// them once, as its event's time.
	Offset time.Duration `json:"-"`
	At     time.Time     `json:"-"`

	Info   Info       `json:"info,omitzero"`
	Config SaveConfig `json:"config,omitzero"`

	// OpsPerSec is the delta of total_commands_processed over the time since
	// the previous sample; absent on the first sample after a (re)connect.
	OpsPerSec Opt[float64] `json:"ops_per_sec,omitzero"`
	// WriterOpsPerSec is the rate of vkwatch's own writers against this
	// server, when it runs any.
	WriterOpsPerSec Opt[float64] `json:"writer_ops_per_sec,omitzero"`

	Ping    Latency `json:"ping,omitzero"`    // PINGs of the interval since the previous sample
	Ping10s Latency `json:"ping10s,omitzero"` // PINGs of the last 10 s

	Proc ProcMem `json:"proc,omitzero"`

	// Observer is what watching costs the server: its main thread's time
	// on vkwatch's own commands.
	Observer ObserverCost `json:"observer,omitzero"`

	// Derived: figures computed from the measured fields above, never
	// recorded. saves.Tracker.Observe fills them, the one function the
	// watcher calls live and a recording's reader calls on every sample it
	// reads (source.Derive for the instruments, then the save's progress).

	// COW is the copy-on-write of the running save child from the fastest
	// instrument there is: the child's Private_Dirty from /proc for a local
	// server (read every sample), else INFO's current_cow_size (which the
	// server refreshes about once a second). 0 while no save runs: FromProc
	// when vkwatch can read the server's smaps_rollup (it would see a
	// child), else FromInfo on a server that reports the field; INFO's 0
	// during a forkless save (no child). Absent when neither instrument
	// reads. COWFrom names the instrument. See Derive.
	COW     Opt[int64] `json:"-"`
	COWFrom Instrument `json:"-"`
	// Footprint is the memory the host pays for the server: for a local
	// server its RSS plus the save child's private dirty pages (/proc);
	// for a remote one used_memory_rss + current_cow_size, the server's own
	// estimate (also for a local child whose smaps_rollup vkwatch may not
	// read). A fork's cost shows here and not in used_memory or RSS, which
	// stay flat in the parent. FootprintFrom names the instrument.
	Footprint     Opt[int64] `json:"-"`
	FootprintFrom Instrument `json:"-"`

	// Save is the progress of the save or AOF rewrite running now, nil
	// when none: the save tracker's (saves.Tracker), which follows the
	// samples and the answers to vkwatch's commands in order.
	Save *SaveProgress `json:"-"`
}

// SaveKind names the kind of background job.
type SaveKind string

const (
	SaveFork     SaveKind = "BGSAVE fork"
	SaveForkless SaveKind = "BGSAVE forkless"
	SaveAOF      SaveKind = "AOF rewrite"
	// SaveSlotMigration is the fork of Valkey 9.0's atomic slot
	// migration: its child streams the slots' snapshot to the target.
	SaveSlotMigration SaveKind = "slot migration fork"
	// SaveForklessSync is a replica's full sync served without a fork
	// (Valkey 9.2): rdb_bgsave_in_progress 1 and rdb_current_bgsave_type
	// forkless, but no BGSAVE (rdb_saves, the status and the type are not
	// updated, and current_save_keys_total stays 0).
	SaveForklessSync SaveKind = "sync forkless"
)

// Job names what a background job of kind k is, as a label without
// spaces: "bgsave", "aofrewrite", "sync" (a replica's full sync that is
// no BGSAVE) or "slotmigration"; "" for an unknown kind.
func (k SaveKind) Job() string {
	switch k {
	case SaveFork, SaveForkless:
		return "bgsave"
	case SaveAOF:
		return "aofrewrite"
	case SaveForklessSync:
		return "sync"
	case SaveSlotMigration:
		return "slotmigration"
	}
	return ""
}

// Method is how a job of kind k runs beside the server: "fork" (a child
// process that copies on write) or "forkless" (a thread of the server's
// own, no child); "" for an unknown kind.
func (k SaveKind) Method() string {
	switch k {
	case SaveFork, SaveAOF, SaveSlotMigration:
		return "fork"
	case SaveForkless, SaveForklessSync:
		return "forkless"
	}
	return ""
}

// Instrument names where a figure comes from, on screen and in recordings.
type Instrument string

const (
	// FromProc: the kernel's /proc (smaps_rollup of the server and of its
	// save child), for a server on this host.
	FromProc Instrument = "proc"
	// FromInfo: the server's own INFO fields (current_cow_size, RSS).
	FromInfo Instrument = "info"
	// FromRDBLastCOW and FromAOFLastCOW: the copy-on-write the save
	// child reported when it ended (INFO persistence), read only for the
	// save that set it: a fork save or rewrite that ended ok (the child
	// reports it only then).
	FromRDBLastCOW Instrument = "rdb_last_cow_size"
	FromAOFLastCOW Instrument = "aof_last_cow_size"
	// FromNoChild: a forkless save or sync has no child, so nothing is
	// copied on write: 0 by construction. Its memory cost is the server's
	// own rise (used_memory, RSS). rdb_last_cow_size keeps the last fork
	// save's figure meanwhile and says nothing of it.
	FromNoChild Instrument = "none: no child (forkless)"
)

// TriggerKind says who started a save or rewrite.
type TriggerKind string

const (
	TriggerUser     TriggerKind = "vkwatch"  // a key pressed in vkwatch (b, B, a, A), or bench
	TriggerReplica  TriggerKind = "replica"  // a replica's full sync (INFO replication: wait_bgsave)
	TriggerAOF      TriggerKind = "aof"      // the server's own AOF rewrite (auto-aof-rewrite-*)
	TriggerSchedule TriggerKind = "schedule" // a `save <seconds> <changes>` rule came due
	TriggerOther    TriggerKind = "other"    // another client (BGSAVE, BGREWRITEAOF, ...)
	// TriggerSlotMigration is Valkey 9.0's atomic slot migration (INFO
	// persistence: slot_migration_fork_in_progress).
	TriggerSlotMigration TriggerKind = "slot migration"
)

// Trigger is who started a save, as far as vkwatch can tell, and the
// detail that told it: the command ("BGSAVE", "BGREWRITEAOF") for
// TriggerUser, "replica 10.0.0.7:6380, diskless" (or ", disk"),
// "appendonly turned on" or "auto-aof-rewrite-percentage 100:
// aof_current_size N, aof_base_size M", "save 60 10000"; empty for
// TriggerOther. Kind is empty when vkwatch cannot tell (CONFIG GET refused,
// a server without the fields it needs). The evidence and its order are in
// saves.Tracker.triggerOf (source/saves/trigger.go).
type Trigger struct {
	Kind   TriggerKind `json:"kind,omitzero"`
	Detail string      `json:"detail,omitzero"`
}

// CurvePoint is one point of a save's cost curve (valkey PR #905's plot):
// what the save had cost when it had processed Progress of its keys.
type CurvePoint struct {
	Progress  float64       `json:"progress,omitzero"`               // keys processed / keys total, 0..1
	Elapsed   time.Duration `json:"elapsed_ns,omitzero,format:nano"` // since the save was first seen running
	COW       Opt[int64]    `json:"cow,omitzero"`                    // Sample.COW
	Footprint Opt[int64]    `json:"footprint,omitzero"`              // Sample.Footprint
}

// SaveProgress is a running save as the server reports it.
type SaveProgress struct {
	Kind      SaveKind      `json:"kind,omitzero"`
	Trigger   Trigger       `json:"trigger,omitzero"`
	Started   time.Duration `json:"started_ns,omitzero,format:nano"` // offset of the first sample that saw it running
	Elapsed   time.Duration `json:"elapsed_ns,omitzero,format:nano"` // observed
	Processed Opt[int64]    `json:"processed,omitzero"`              // current_save_keys_processed
	Total     Opt[int64]    `json:"total,omitzero"`                  // current_save_keys_total
	// ETA is the server's forkless_estimated_seconds_remaining when it
	// is one (not -1), otherwise, for a fork save, derived from a smoothed
	// rate of Processed. Absent until there is a rate to derive it from,
	// and during a Phase: never negative.
	ETA Opt[time.Duration] `json:"eta_ns,omitzero"`
	// Phase names a stretch of the save that has no ETA of its own
	// (PhaseStarting, PhaseFinishing, PhaseCancelling); empty while keys
	// are written.
	Phase   string     `json:"phase,omitzero"`
	LiveCOW Opt[int64] `json:"live_cow,omitzero"` // current_cow_size (0 forkless: there is no child)

	// curve is the save's cost curve up to and with this sample: the
	// tracker's own points (saves.Tracker), shared, so every view of a
	// running save reads the one copy. Unexported, so a recording does not
	// keep it (a save's report carries the whole curve): a sample read
	// from a file has none.
	curve []CurvePoint
}

// SetCurve attaches the running save's cost curve so far (the tracker's
// points). The slice is clipped: an append by a reader copies it and never
// writes into the tracker's array, which goes on growing past it.
func (p *SaveProgress) SetCurve(pts []CurvePoint) {
	p.curve = pts[:len(pts):len(pts)]
}

// Curve is the cost curve SetCurve attached: nil for a sample read from a
// recording, and for one whose save has no point yet (the tracker adds a
// point exactly when saves.CurvePointOf makes one, so such a sample makes
// none either).
func (p *SaveProgress) Curve() []CurvePoint { return p.curve }

// WithoutCurve is p as a recording keeps it: without the curve.
func (p SaveProgress) WithoutCurve() SaveProgress {
	p.curve = nil
	return p
}

// The phases of a save that have no ETA (SaveProgress.Phase).
const (
	// PhaseStarting: a forkless save before its first key
	// (forkless_estimated_seconds_remaining -1, nothing processed yet).
	PhaseStarting = "starting: before the first key"
	// PhaseFinishing: every key written, the file being fsynced and
	// renamed: a forkless save whose ETA went back to -1 after it had
	// one (or after keys were processed), a fork save at N/N keys. It
	// lasts what the disk takes.
	PhaseFinishing = "finishing: writing the file"
	// PhaseCancelling: BGSAVE CANCEL was answered ("Background saving
	// cancelled") and the save has not stopped yet: on Valkey 9.2 the
	// forkless save thread stops a moment after the answer.
	PhaseCancelling = "cancelling: BGSAVE CANCEL answered, the save is stopping"
)

// Fraction is Processed/Total in [0,1], absent when either is unknown.
func (p SaveProgress) Fraction() Opt[float64] {
	if !p.Processed.OK || !p.Total.OK || p.Total.V <= 0 {
		return Opt[float64]{}
	}
	f := float64(p.Processed.V) / float64(p.Total.V)
	if f > 1 {
		f = 1
	}
	if f < 0 {
		f = 0
	}
	return Some(f)
}

// A SaveReport's Status: how the save ended.
const (
	// StatusOK and StatusErr are the server's own rdb_last_bgsave_status /
	// aof_last_bgrewrite_status, read only for the save that set them.
	StatusOK  = "ok"
	StatusErr = "err"
	// StatusCancelled is a save the user cancelled with BGSAVE CANCEL
	// (Valkey 8.1+).
	StatusCancelled = "cancelled"
	// StatusAborted is a save the server stopped without failing it
	// (FLUSHALL / FLUSHDB during the save, a replica's diskless load, a
	// shutdown): its status fields stay the previous save's.
	StatusAborted = "aborted"
	// StatusLost is a save whose server restarted while it ran.
	StatusLost = "lost (server restarted)"
)

// SaveReport is what a save cost, produced when it ends.
type SaveReport struct {
	Node    NodeID   `json:"node,omitzero"`
	Addr    string   `json:"addr,omitzero"` // display address
	Kind    SaveKind `json:"kind,omitzero"`
	Trigger Trigger  `json:"trigger,omitzero"`
	// Status is how the save ended (StatusOK, StatusErr,
	// StatusCancelled, StatusAborted, StatusLost), and Evidence what
	// that rests on, in the fields' own names: "rdb_last_save_time
	// advanced", "BGSAVE CANCEL answered ...", "rdb_last_save_time not
	// advanced, rdb_changes_since_last_save not reset, status unchanged".
	// Empty for a forkless sync (the server keeps no status of one); the
	// evidence then says so. See saves.Tracker.
	Status   string `json:"status,omitzero"`
	Evidence string `json:"evidence,omitzero"`
	// MethodNote calls out a save whose method is not the one set: a fork
	// while bgsave-default-method is forkless (the server falls back to
	// fork when a loaded module cannot be iterated forklessly). Empty
	// otherwise.
	MethodNote string `json:"method_note,omitzero"`

	Started   time.Duration `json:"started_ns,omitzero,format:nano"` // offsets from the Clock epoch
	Ended     time.Duration `json:"ended_ns,omitzero,format:nano"`
	StartedAt time.Time     `json:"started_at,omitzero"`

	// Observed is Ended - Started as seen by sampling: from the first
	// sample that saw the save running to the first that no longer did.
	// ObservedUpTo says no sample saw it running: it ran between two
	// samples (Started is the earlier, or vkwatch's BGSAVE if later), and
	// Observed is the most it can have lasted.
	Observed     time.Duration `json:"observed_ns,omitzero,format:nano"`
	ObservedUpTo bool          `json:"observed_up_to,omitzero"`
	// ServerSeconds is rdb_last_bgsave_time_sec / aof_last_rewrite_time_sec
	// when this save set it: one that ended ok, err or cancelled, or one
	// whose end changed the field; absent for an abort that left it as
	// it was (it may then be an earlier save's).
	ServerSeconds Opt[int64] `json:"server_seconds,omitzero"`

	// COW is the save's copy-on-write by the server's own account, and
	// COWFrom where it comes from: rdb_last_cow_size / aof_last_cow_size
	// for a fork save or rewrite that ended ok (FromRDBLastCOW,
	// FromAOFLastCOW), 0 FromNoChild for a forkless save or sync. Absent
	// when no figure of this save's exists: a fork save that failed, was
	// cancelled or aborted leaves the field at an earlier save's value.
	COW     Opt[int64] `json:"cow,omitzero"`
	COWFrom Instrument `json:"cow_from,omitzero"`
	// PeakLiveCOW is the largest current_cow_size seen during the save.
	// The server refreshes that field about once a second, so a short save
	// can end with it still 0 while the child copied megabytes: a 0 that
	// the server's own rdb_last_cow_size / aof_last_cow_size contradicts is
	// absent, not zero.
	PeakLiveCOW Opt[int64] `json:"peak_live_cow,omitzero"`
	// PeakCOW is the largest Sample.COW seen during the save, PeakCOWFrom
	// its instrument, and PeakAtProgress the save's progress (0..1) when it
	// was seen. A child's copy-on-write only grows, so where the samples
	// saw less than COW (or nothing), the peak is COW, from COWFrom, at
	// the save's end (progress 1).
	PeakCOW        Opt[int64]   `json:"peak_cow,omitzero"`
	PeakCOWFrom    Instrument   `json:"peak_cow_from,omitzero"`
	PeakAtProgress Opt[float64] `json:"peak_at_progress,omitzero"`
	// KeysTotal is current_save_keys_total as the save last reported it:
	// the keys it had to write (a forecast's keys per second). Absent
	// when no sample during the save carried it.
	KeysTotal Opt[int64] `json:"keys_total,omitzero"`
	// PeakFootprintDelta is the largest Sample.Footprint during the save
	// above its level in the sample just before, counting only samples read
	// by the same instrument as that one (a delta across instruments would
	// measure their difference). Absent without such a baseline.
	// Where the samples saw less than the server's own figures say the
	// save cost (a save shorter than a sample, a child that exited before
	// /proc read it), it is the RSS rise at the end plus COW, and
	// PeakFootprintFrom says so ("info rss + rdb_last_cow_size");
	// otherwise PeakFootprintFrom is the samples' instrument.
	PeakFootprintDelta Opt[int64] `json:"peak_footprint_delta,omitzero"`
	PeakFootprintFrom  Instrument `json:"peak_footprint_from,omitzero"`
	// ForkPause is latest_fork_usec after a fork save or rewrite: how long
	// fork() blocked the server's main thread. Absent forkless, and absent
	// unless total_forks grew by exactly one with this save (before 6.2,
	// without total_forks: unless latest_fork_usec changed): otherwise the
	// field may hold another fork's pause.
	ForkPause Opt[time.Duration] `json:"fork_pause_ns,omitzero"`
	// Curve is the save's cost against its progress, one point per sample
	// that knew the progress; nil for a save no sample saw running.
	Curve []CurvePoint `json:"curve,omitzero"`

	BaseUsed      Opt[int64] `json:"base_used,omitzero"` // used_memory just before the save
	BaseRSS       Opt[int64] `json:"base_rss,omitzero"`
	PeakUsedDelta Opt[int64] `json:"peak_used_delta,omitzero"` // max used_memory during - BaseUsed
	PeakRSSDelta  Opt[int64] `json:"peak_rss_delta,omitzero"`

	// From /proc, where the server is local.
	PeakProcRSSDelta      Opt[int64] `json:"peak_proc_rss_delta,omitzero"`
	PeakChildPrivateDirty Opt[int64] `json:"peak_child_private_dirty,omitzero"`

	OpsBefore       Opt[float64] `json:"ops_before,omitzero"` // mean server ops/s in the seconds before
	OpsDuring       Opt[float64] `json:"ops_during,omitzero"`
	WriterOpsBefore Opt[float64] `json:"writer_ops_before,omitzero"`
	WriterOpsDuring Opt[float64] `json:"writer_ops_during,omitzero"`

	PingBefore Latency `json:"ping_before,omitzero"`
	PingDuring Latency `json:"ping_during,omitzero"`
	// WorstSpike is the spike of the save's worst PING (PingDuring.Max)
	// with its causes: "worst ping 76.8 ms: fork pause 33.0 ms + ...";
	// nil when that PING broke no spike rule (or no spike was read).
	WorstSpike *Spike `json:"worst_spike,omitzero"`

	// BlockedBefore is blocked_clients in the sample just before the
	// save, BlockedDuring its peak while the save ran and BlockedAfter
	// its value in the sample that saw the save end; each absent where
	// the field was not read. Writers a forkless save blocks (a write to
	// a key its thread still holds waits) are the peak above the level
	// outside the save (BLPOP and the like count at any time).
	BlockedBefore Opt[int64] `json:"blocked_before,omitzero"`
	BlockedDuring Opt[int64] `json:"blocked_during,omitzero"`
	BlockedAfter  Opt[int64] `json:"blocked_after,omitzero"`

	// ForecastCOW is the copy-on-write forecast for this save from the
	// last sample before it (source/forecast), ForecastBasis what the
	// forecast rested on ("calibrated", "uniform bound", "worst case");
	// absent and empty where no forecast was made. Set by whoever keeps
	// the forecast (source/store), not by the save tracker (source/saves).
	ForecastCOW   Opt[int64] `json:"forecast_cow,omitzero"`
	ForecastBasis string     `json:"forecast_basis,omitzero"`
}

// CommandResult is the answer to a command the user sent (BGSAVE, BGREWRITEAOF).
type CommandResult struct {
	Command string        `json:"command,omitzero"`             // as sent, e.g. "BGSAVE"
	Reply   string        `json:"reply,omitzero"`               // the server's status reply on success
	Err     string        `json:"err,omitzero"`                 // the server's own error text, or the transport error
	Sent    time.Duration `json:"sent_ns,omitzero,format:nano"` // offsets from the Clock epoch
	Done    time.Duration `json:"done_ns,omitzero,format:nano"`
}

// OK reports whether the server accepted the command.
func (c CommandResult) OK() bool { return c.Err == "" }

// EventKind tells which field of an Event is filled.
type EventKind int

const (
	EventSample       EventKind = iota + 1 // Sample
	EventConnected                         // Identity
	EventDisconnected                      // Err: why; the watcher retries with backoff
	EventCommand                           // Command: a command's answer
	EventSaveStarted                       // Sample: the first sample that saw the save running
	EventSaveEnded                         // Report
	// EventTopology: Topology, the fleet's members after a change (a node
	// added or removed, a role or health changed, a new PING interval).
	// Its Node is empty: it speaks for the fleet, not for one server.
	EventTopology
	// EventSpike: Spike, a PING that broke the spike rule and what
	// explains it (package spike).
	EventSpike

	// lastEventKind is the highest kind; readers of recordings list the
	// kinds up to it.
	lastEventKind = EventSpike
)

// EventKinds returns every event kind, in order.
func EventKinds() []EventKind {
	out := make([]EventKind, 0, lastEventKind)
	for k := EventSample; k <= lastEventKind; k++ {
		out = append(out, k)
	}
	return out
}

// MarshalText writes the kind's name (String): recordings name kinds.
func (k EventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name; a name this vkwatch does not know
// (a newer one's) reads as 0, an event a reader skips.
func (k *EventKind) UnmarshalText(b []byte) error {
	*k = 0
	for _, c := range EventKinds() {
		if c.String() == string(b) {
			*k = c
		}
	}
	return nil
}

func (k EventKind) String() string {
	switch k {
	case EventSample:
		return "sample"
	case EventConnected:
		return "connected"
	case EventDisconnected:
		return "disconnected"
	case EventCommand:
		return "command"
	case EventSaveStarted:
		return "save_started"
	case EventSaveEnded:
		return "save_ended"
	case EventTopology:
		return "topology"
	case EventSpike:
		return "spike"
	}
	return "unknown"
}

// Event is everything a watcher tells the rest of vkwatch. Node says which
// server; Offset and At say when.
type Event struct {
	// Offset is since the Clock's epoch, At the epoch + Offset: a
	// recording holds the offset ("t_ns") and its header the epoch.
	Offset time.Duration `json:"t_ns,format:nano"`
	At     time.Time     `json:"-"`
	Node   NodeID        `json:"node,omitzero"`
	Kind   EventKind     `json:"kind"`

	Sample   *Sample   `json:"sample,omitzero"`
	Identity *Identity `json:"identity,omitzero"`
	Err      string    `json:"err,omitzero"`
	// Stalled, on an EventDisconnected, says the server is connected but
	// silent: INFO went unanswered (DEBUG SLEEP, a huge command, SIGSTOP),
	// and Err says for how long. The watcher keeps the connection and all
	// it sampled; a save goes on and shows when the server answers again.
	// False when the connection is lost or could not be made.
	Stalled  bool           `json:"stalled,omitzero"`
	Command  *CommandResult `json:"command,omitzero"`
	Report   *SaveReport    `json:"report,omitzero"`
	Topology *Topology      `json:"topology,omitzero"`
	Spike    *Spike         `json:"spike,omitzero"`
}

// EventReader reads events in order: a recording streamed to a replay
// (record.Scanner and record.WindowSource's readers; ui.ReplayReader is
// this interface). A caller that reads all in one loop ranges over
// record.Scanner.Events instead.
type EventReader interface {
	// Next returns the next event; false at the end (or on an error, which
	// Err returns).
	Next() (Event, bool)
	Err() error
	Close()
}

// PeakProgress is the save's progress when the samples saw its
// copy-on-write peak (PeakAtProgress), where that says something: absent
// for a save without a child (nothing to peak), and where the peak was
// seen before the server had reported any key written. The server
// refreshes current_save_keys_processed about once a second, so a short
// save's samples read 0 keys while its child already copies pages: that 0
// is no reading of progress ("at 0%" would say the peak came before the
// first key), so it is absent, not zero. The pane, the reports table and
// the report's page all show this figure.
func (r *SaveReport) PeakProgress() Opt[float64] {
	f, ok := r.PeakAtProgress.Get()
	if !ok || f <= 0 || r.COWFrom == FromNoChild {
		return Opt[float64]{}
	}
	return Some(f)
}

// BlockedWriters is how many clients the save held up at its worst: the
// peak of blocked_clients during it above the level outside it (before
// the save where that was read, else after it), never below 0. Absent
// where no sample during the save read blocked_clients. A forkless save
// blocks the writers of keys its thread still holds; a fork save blocks
// none, so its figure is 0 unless other clients blocked (BLPOP...) just
// then.
func (r *SaveReport) BlockedWriters() Opt[int64] {
	peak, ok := r.BlockedDuring.Get()
	if !ok {
		return Opt[int64]{}
	}
	outside := r.BlockedBefore
	if !outside.OK {
		outside = r.BlockedAfter
	}
	return Some(max(peak-outside.Or(0), 0))
}

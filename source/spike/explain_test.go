package spike

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// serverTime is the server's clock at the sample before the spike (unix
// µs); the sample after is 400 ms later.
const (
	serverTime = 1_796_565_962_100_000
	serverSec  = serverTime / 1_000_000
)

// quiet is the evidence of a spike of ping on a remote Redis 7 server
// that did nothing: every counter read and unchanged, SLOWLOG read with
// nothing new, logging commands of 1 ms or more.
func quiet(ping time.Duration) *Evidence {
	in := source.Info{
		TotalForks: source.Some[int64](3), LatestForkUsec: source.Some[int64](1200),
		ExpireCycleCPUms: source.Some[int64](10), ExpiredKeys: source.Some[int64](5), EvictedKeys: source.Some[int64](0),
		LazyFreePending: source.Some[int64](0), DefragTimeMs: source.Some[int64](0),
		AOFEnabled: source.Some[int64](0), ServerTimeUsec: source.Some[int64](serverTime),
		Uptime: source.Some[int64](100), ProcessID: source.Some[int64](42),
	}
	after := in
	after.ServerTimeUsec.V += 400_000
	return &Evidence{Ping: ping, Before: &in, After: &after, SlowLogRead: true, Stamped: true,
		Config: source.SaveConfig{SlowlogSlowerThan: source.Some[int64](1000), LatencyMonitorThreshold: source.Some[int64](0),
			AppendFsync: "everysec"}}
}

func kinds(cs []source.SpikeCause) string {
	var k []string
	for _, c := range cs {
		k = append(k, string(c.Kind))
	}
	return strings.Join(k, ",")
}

func text(cs []source.SpikeCause, ping time.Duration) string {
	s := source.Spike{Ping: ping, Causes: cs}
	return s.Summary()
}

func TestNotSeenRemote(t *testing.T) {
	e := quiet(30 * ms)
	cs, checked := Explain(e)
	if got := text(cs, e.Ping); got != "not seen by the server (no slow command, no fork, no cycle; a remote server's host is not read)" {
		t.Errorf("causes %q", got)
	}
	all := strings.Join(checked, " | ")
	for _, want := range []string{"no fork (total_forks +0)", "SLOWLOG: nothing in the window (logs commands of 1.0 ms or more)",
		"latency monitor off (latency-monitor-threshold 0)", "vkwatch never sets it", "active expiry +0 ms", "no eviction",
		"remote server", "timed by the kernel's receive timestamp"} {
		if !strings.Contains(all, want) {
			t.Errorf("checked %q lacks %q", all, want)
		}
	}
}

func TestFork(t *testing.T) {
	e := quiet(68900 * time.Microsecond)
	e.After.TotalForks.V++
	e.After.LatestForkUsec.V = 33000
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1)" {
		t.Errorf("%q", got)
	}
	e.SlowLog = []SlowEntry{{ID: 3, Time: serverSec, Duration: 34 * ms, Command: "BGSAVE", Client: "127.0.0.1:5"}}
	cs, _ = Explain(e)
	if got := text(cs, e.Ping); got != "fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1; started by BGSAVE (SLOWLOG #3 from 127.0.0.1:5, logged 34.0 ms))" {
		t.Errorf("the command that forked: %q", got)
	}
	e.SlowLog = nil
	e.After.TotalForks.V++
	e.After.LatestForkUsec.V = 90000
	cs, _ = Explain(e)
	if got := text(cs, e.Ping); got != "fork pause 68.9 ms (latest_fork_usec of the last of 2 forks, total_forks +2)" {
		t.Errorf("a pause longer than the spike covers it all: %q", got)
	}
}

// TestForkBefore62: no total_forks, but a new latest_fork_usec.
func TestForkBefore62(t *testing.T) {
	e := quiet(20 * ms)
	e.Before.TotalForks, e.After.TotalForks = source.Opt[int64]{}, source.Opt[int64]{}
	cs, _ := Explain(e)
	if cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "forks (no total_forks)") {
		t.Errorf("unchanged pause, no counter: %+v", cs)
	}
	e.After.LatestForkUsec.V = 15000
	cs, _ = Explain(e)
	if cs[0].Kind != source.CauseFork || cs[0].Covers.V != 15*ms {
		t.Errorf("%+v", cs)
	}
}

func TestSlowCommand(t *testing.T) {
	e := quiet(52 * ms)
	e.SlowLog = []SlowEntry{
		{ID: 12, Time: serverSec + 1, Duration: 50100 * time.Microsecond, Command: "DEBUG SLEEP", Client: "127.0.0.1:45418"},
		{ID: 11, Time: serverSec - 1, Duration: 30 * ms, Command: "KEYS", Client: "127.0.0.1:1"}, // before the window
	}
	e.Stats = map[string]CommandStats{"debug": {P999: 50200 * time.Microsecond}}
	cs, _ := Explain(e)
	want := "DEBUG SLEEP 50.1 ms of 52.0 ms (SLOWLOG #12 from 127.0.0.1:45418; its p99.9 50.2 ms (INFO latencystats))"
	if got := text(cs, e.Ping); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
}

func TestManySlowCommands(t *testing.T) {
	e := quiet(100 * ms)
	for i := range 5 {
		e.SlowLog = append(e.SlowLog, SlowEntry{ID: int64(i), Time: serverSec, Duration: time.Duration(10+i) * ms, Command: "SUNION"})
	}
	cs, _ := Explain(e)
	if kinds(cs) != "command,command,command,command" || cs[0].Covers.V != 14*ms || cs[3].What != "2 more slow commands" || cs[3].Covers.V != 21*ms {
		t.Errorf("%+v", cs)
	}
}

// TestSlowlogFirstReadNoClock: a first read of SLOWLOG on a server
// without server_time_usec cannot place its entries.
func TestSlowlogFirstReadNoClock(t *testing.T) {
	e := quiet(50 * ms)
	e.Before.ServerTimeUsec, e.After.ServerTimeUsec = source.Opt[int64]{}, source.Opt[int64]{}
	e.SlowLog = []SlowEntry{{ID: 1, Time: 5, Duration: 49 * ms, Command: "KEYS"}}
	e.SlowLogFirst = true
	cs, _ := Explain(e)
	if cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "server_time_usec") {
		t.Errorf("%+v", cs)
	}
	e.SlowLogFirst = false
	cs, _ = Explain(e)
	if cs[0].Kind != source.CauseCommand || !strings.Contains(cs[0].Evidence, "placed by its id alone") {
		t.Errorf("%+v", cs)
	}
}

// TestSlowlogCannotSee: where SLOWLOG would not log a command as long as
// the spike (or is off, or refused), a spike with nothing else found is
// unexplained, saying why.
func TestSlowlogCannotSee(t *testing.T) {
	for name, set := range map[string]func(*Evidence){
		"threshold": func(e *Evidence) { e.Config.SlowlogSlowerThan.V = 10000 },
		"off":       func(e *Evidence) { e.Config.SlowlogSlowerThan.V = -1 },
		"refused": func(e *Evidence) {
			e.SlowLogErr = "NOPERM this user has no permissions to run the 'slowlog|get' command"
		},
		"not read":   func(e *Evidence) { e.SlowLogRead = false },
		"not config": func(e *Evidence) { e.Config.SlowlogSlowerThan = source.Opt[int64]{} },
	} {
		e := quiet(5 * ms)
		set(e)
		cs, _ := Explain(e)
		if len(cs) != 1 || cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "command") {
			t.Errorf("%s: %+v", name, cs)
		}
	}
	e := quiet(5 * ms)
	e.Config.SlowlogSlowerThan.V = 4999
	if cs, _ := Explain(e); cs[0].Kind != source.CauseNotSeen {
		t.Errorf("threshold under the spike: %+v", cs)
	}
}

func TestLatencyMonitor(t *testing.T) {
	e := quiet(40 * ms)
	e.Config.LatencyMonitorThreshold.V = 5
	e.LatencyRead = true
	e.After.TotalForks.V++
	e.After.LatestForkUsec.V = 12000
	e.Latency = []LatencyEvent{
		{Event: "fork", Time: serverSec, Latest: 12 * ms},
		{Event: "expire-cycle", Time: serverSec + 1, Latest: 25 * ms},
		{Event: "rdb-unlink-temp-file", Time: serverSec, Latest: 6 * ms},
		{Event: "eviction-del", Time: serverSec - 5, Latest: 30 * ms}, // long before
	}
	cs, checked := Explain(e)
	if got := text(cs, e.Ping); got != "fork pause 12.0 ms of 40.0 ms (latest_fork_usec, total_forks +1; LATENCY LATEST fork 12.0 ms) + "+
		"active expiry 25.0 ms of 40.0 ms (LATENCY LATEST expire-cycle 25.0 ms) + "+
		"rdb-unlink-temp-file 6.0 ms of 40.0 ms (LATENCY LATEST rdb-unlink-temp-file 6.0 ms)" {
		t.Errorf("%q", got)
	}
	if strings.Contains(strings.Join(checked, "|"), "latency monitor off") {
		t.Error("on, said off")
	}
	e.Latency = nil
	if _, checked := Explain(e); !strings.Contains(strings.Join(checked, "|"), "latency monitor: no event in the window (threshold 5 ms)") {
		t.Errorf("%q", checked)
	}
}

// TestQuarterRule: a count of time that grows all the time is a cause at
// a quarter of the spike, not below.
func TestQuarterRule(t *testing.T) {
	e := quiet(40 * ms)
	e.After.ExpireCycleCPUms.V += 9
	cs, checked := Explain(e)
	if cs[0].Kind != source.CauseNotSeen || !strings.Contains(strings.Join(checked, "|"), "active expiry +9 ms") {
		t.Errorf("9 ms of 40: %+v", cs)
	}
	e.After.ExpireCycleCPUms.V++
	e.After.ExpiredKeys.V += 50000
	e.After.ExpireCapReached = source.Some[int64](1)
	e.Before.ExpireCapReached = source.Some[int64](0)
	cs, _ = Explain(e)
	if got := text(cs, e.Ping); got != "active expiry 10.0 ms of 40.0 ms (expire_cycle_cpu_milliseconds +10, expired_keys +50000, expired_time_cap_reached_count +1)" {
		t.Errorf("%q", got)
	}
	e = quiet(2 * ms)
	e.After.ExpireCycleCPUms.V++
	if cs, _ := Explain(e); cs[0].Kind != source.CauseExpire {
		t.Errorf("1 ms of a 2 ms spike: %+v", cs)
	}
}

func TestEvictionLazyFreeDefragAOF(t *testing.T) {
	e := quiet(30 * ms)
	e.After.EvictedKeys.V = 500
	e.Before.EvictionOverMs, e.After.EvictionOverMs = source.Some[int64](0), source.Some[int64](120)
	e.After.LazyFreePending.V = 9000
	e.After.DefragTimeMs.V = 12
	e.Before.AOFEnabled.V, e.After.AOFEnabled.V = 1, 1
	e.Before.AOFDelayedFsync, e.After.AOFDelayedFsync = source.Some[int64](2), source.Some[int64](3)
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "eviction (evicted_keys +500, total_eviction_exceeded_time +120 ms over maxmemory) + "+
		"lazy free backlog (lazyfree_pending_objects 0 -> 9000) + active defrag 12.0 ms of 30.0 ms (total_active_defrag_time +12 ms) + "+
		"AOF write waited for fsync (aof_delayed_fsync +1, appendfsync everysec)" {
		t.Errorf("%q", got)
	}
}

func TestForklessBlocked(t *testing.T) {
	e := quiet(14 * ms)
	for _, in := range []*source.Info{e.Before, e.After} {
		in.RDBInProgress, in.RDBCurrentType = source.Some[int64](1), "forkless"
	}
	e.Before.BlockedClients, e.After.BlockedClients = source.Some[int64](0), source.Some[int64](3)
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "writers blocked by the forkless save (blocked_clients 3, rdb_current_bgsave_type forkless; the server keeps no time for it)" {
		t.Errorf("%q", got)
	}
	e.After.BlockedClients.V = 0
	if cs, _ := Explain(e); cs[0].Kind != source.CauseNotSeen {
		t.Errorf("none blocked: %+v", cs)
	}
}

// local makes e a local server's, with the main thread's counters at the
// samples and readings while the PING waited.
func local(e *Evidence, during ...source.ProcSched) *Evidence {
	e.Local, e.ProcOK = true, true
	e.Sent = time.Second
	e.ProcBefore = source.ProcSched{At: 900 * ms, OnCPU: source.Some(100 * ms), RunDelay: source.Some(50 * ms),
		MinFlt: source.Some[int64](1000), MajFlt: source.Some[int64](0), STime: source.Some(20 * ms)}
	e.ProcAfter = e.ProcBefore
	e.ProcAfter.At = 1300 * ms
	e.During = during
	return e
}

// reading is a /proc reading at + of the PING with the thread's time on
// a CPU and waiting for one so far.
func reading(at time.Duration, state, wchan string, cpu, wait time.Duration) source.ProcSched {
	return source.ProcSched{At: time.Second + at, State: state, WaitChan: wchan,
		OnCPU: source.Some(100*ms + cpu), RunDelay: source.Some(50*ms + wait)}
}

func TestNotSeenLocalIdle(t *testing.T) {
	e := local(quiet(30*ms), reading(2*ms, "S", "do_epoll_wait", 0, 0), reading(16*ms, "S", "do_epoll_wait", 100*time.Microsecond, 0))
	e.Config.SlowlogSlowerThan.V = 10000 // would not log a 9 ms command: idle says none ran
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "not seen by the server (no slow command, no fork, no cycle; the server sat idle in its event loop from 2.0 ms to 16.0 ms of the PING (wchan do_epoll_wait))" {
		t.Errorf("%q", got)
	}
	e.During = nil
	if cs, _ := Explain(e); cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "no /proc reading then") {
		t.Errorf("no reading while the PING waited: %+v", cs)
	}
}

func TestLocalBusyUnexplained(t *testing.T) {
	e := local(quiet(30*ms), reading(2*ms, "R", "0", 0, 0), reading(16*ms, "R", "0", 13*ms, 0))
	cs, _ := Explain(e)
	if cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "what kept the server on a CPU 13.0 ms while the PING waited, 2.0 ms to 16.0 ms of the PING") {
		t.Errorf("%+v", cs)
	}
}

// TestStoppedNotTheCommand: a command logged while the server was stopped
// is the stop's doing.
func TestStoppedNotTheCommand(t *testing.T) {
	e := local(quiet(150*ms), reading(2*ms, "T", "do_signal_stop", 0, 0), reading(64*ms, "T", "do_signal_stop", 0, 0),
		reading(128*ms, "T", "do_signal_stop", 0, 0))
	e.SlowLog = []SlowEntry{{ID: 7, Time: serverSec, Duration: 149 * ms, Command: "SET"}}
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "server stopped 126.0 ms of 150.0 ms (/proc/PID/task/PID/stat state T from 2.0 ms to 128.0 ms of the PING; "+
		"SLOWLOG #7 SET 149.0 ms logged while the server was stopped)" {
		t.Errorf("%q", got)
	}
}

// TestCPUWaitNotTheCommand: a command logged while the server waited for
// a CPU most of the time is the host's doing; one that slept is not.
func TestCPUWaitNotTheCommand(t *testing.T) {
	e := local(quiet(20*ms), reading(2*ms, "R", "0", 0, 0), reading(16*ms, "R", "0", 1*ms, 13*ms))
	e.ProcAfter.RunDelay.V += 14 * ms
	e.SlowLog = []SlowEntry{{ID: 7, Time: serverSec, Duration: 15 * ms, Command: "SET"}}
	e.ProcAfter.CPUPressure, e.ProcBefore.CPUPressure = source.Some(400*ms), source.Some(100*ms)
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "waited for a CPU 13.0 ms of 20.0 ms (/proc/PID/schedstat run delay +13.0 ms while the PING waited, 2.0 ms to 16.0 ms of the PING; "+
		"host CPU pressure +300.0 ms (/proc/pressure/cpu); SLOWLOG #7 SET 15.0 ms logged while the server waited 14.0 ms for a CPU between the samples)" {
		t.Errorf("%q", got)
	}
	// DEBUG SLEEP: asleep most of the time, waiting for a CPU a little.
	e = local(quiet(52*ms), reading(2*ms, "S", "hrtimer_nanosleep", 0, 0), reading(32*ms, "S", "hrtimer_nanosleep", 0, 6*ms))
	e.SlowLog = []SlowEntry{{ID: 8, Time: serverSec, Duration: 50 * ms, Command: "DEBUG SLEEP"}}
	cs, _ = Explain(e)
	if kinds(cs) != "command" {
		t.Errorf("a sleeping command: %+v", cs)
	}
}

func TestFaults(t *testing.T) {
	e := local(quiet(60*ms), reading(2*ms, "R", "0", 0, 0), reading(32*ms, "R", "0", 29*ms, 0))
	e.After.TotalForks.V++
	e.After.LatestForkUsec.V = 10000
	e.ProcAfter.MinFlt.V += 5000
	e.ProcAfter.STime.V += 40 * ms
	e.AnonHuge = source.Some[int64](512 << 20)
	cs, _ := Explain(e)
	if kinds(cs) != "fork,page_faults" || cs[1].Covers.V != 30*ms ||
		!strings.Contains(cs[1].Evidence, "minflt +5000, majflt +0, kernel time +40.0 ms") || !strings.Contains(cs[1].Evidence, "AnonHugePages 512 MiB") {
		t.Errorf("%+v", cs)
	}
	e.ProcAfter.STime.V -= 25 * ms // 15 ms, 5 of it not the fork's: under a quarter
	cs, _ = Explain(e)
	if kinds(cs) != "fork" {
		t.Errorf("%+v", cs)
	}
	// Kernel time with few faults is the server's syscalls: 110 ms of it
	// with one fault is no page faults' doing.
	e.ProcAfter.STime.V += 100 * ms
	e.ProcAfter.MinFlt.V -= 4999
	if cs, _ := Explain(e); kinds(cs) != "fork" {
		t.Errorf("kernel time with one fault: %+v", cs)
	}
	// Without huge pages, 5,000 faults cost at most 125 ms at 25 µs; 500
	// at most 12.5 ms, under a quarter of the spike.
	e.AnonHuge = source.Some[int64](0)
	e.ProcAfter.MinFlt.V += 4999
	if cs, _ := Explain(e); kinds(cs) != "fork,page_faults" || cs[1].Covers.V != 60*ms {
		t.Errorf("5,000 small faults: %+v", cs)
	}
	e.ProcAfter.MinFlt.V -= 4500
	if cs, _ := Explain(e); kinds(cs) != "fork" {
		t.Errorf("500 small faults: %+v", cs)
	}
	e.ProcAfter.MajFlt.V = 3
	if cs, _ := Explain(e); kinds(cs) != "fork,page_faults" || cs[1].What != "major page faults" {
		t.Errorf("%+v", cs)
	}
}

func TestKernelWait(t *testing.T) {
	e := local(quiet(60*ms), reading(2*ms, "D", "jbd2_log_wait_commit", 0, 0), reading(32*ms, "D", "jbd2_log_wait_commit", 0, 0))
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "waited in the kernel (state D at 2.0 ms of the PING (wchan jbd2_log_wait_commit))" {
		t.Errorf("%q", got)
	}
}

func TestVkwatchLate(t *testing.T) {
	e := quiet(20 * ms)
	e.Stamped, e.ProbeLate = false, 12*ms
	cs, _ := Explain(e)
	if got := text(cs, e.Ping); got != "vkwatch's probe late 12.0 ms of 20.0 ms (its loop ran up to 12.0 ms late, and no kernel timestamp timed the answer)" {
		t.Errorf("%q", got)
	}
	e.Stamped = true
	if cs, _ := Explain(e); cs[0].Kind != source.CauseNotSeen {
		t.Errorf("a late loop lengthens no kernel-timed answer: %+v", cs)
	}
}

func TestNoBeforeOrRestart(t *testing.T) {
	e := quiet(20 * ms)
	e.After.Uptime.V = 1
	if cs, _ := Explain(e); cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "restarted") {
		t.Errorf("%+v", cs)
	}
	e.Before = nil
	if cs, _ := Explain(e); cs[0].Kind != source.CauseUnexplained || !strings.Contains(cs[0].Evidence, "no sample before") {
		t.Errorf("%+v", cs)
	}
}

// TestServerSideFirst: the server's own causes come before the host's.
func TestServerSideFirst(t *testing.T) {
	e := local(quiet(60*ms), reading(2*ms, "R", "0", 0, 0), reading(32*ms, "R", "0", 5*ms, 25*ms))
	e.After.ExpireCycleCPUms.V += 20
	cs, _ := Explain(e)
	if kinds(cs) != "expire,cpu_wait" {
		t.Errorf("%s", kinds(cs))
	}
	s := source.Spike{Causes: cs}
	if !s.ServerSide() || !s.Has(source.CauseCPUWait) || s.Has(source.CauseFork) {
		t.Errorf("%+v", s)
	}
}

// TestHostMadeSlowOnlyTheFast: a command logged far slower than its own
// median (a SET) while the server waited for a CPU at least half that long
// is the host's doing; one slow by itself (KEYS, its p50 its own time) is
// blamed beside the wait; with less waiting than that, the SET is blamed.
func TestHostMadeSlowOnlyTheFast(t *testing.T) {
	e := local(quiet(300 * ms)) // no reading while the PING waited: the samples' counters
	e.ProcAfter.OnCPU.V += 120 * ms
	e.ProcAfter.RunDelay.V += 160 * ms
	e.SlowLog = []SlowEntry{{ID: 1, Time: serverSec, Duration: 290 * ms, Command: "KEYS"}, {ID: 2, Time: serverSec, Duration: 12 * ms, Command: "SET"}}
	e.Stats = map[string]CommandStats{"keys": {P50: 290 * ms, P999: 290 * ms}, "set": {P50: 5 * time.Microsecond, P999: 2 * ms}}
	cs, _ := Explain(e)
	if kinds(cs) != "command,cpu_wait" || cs[0].What != "KEYS" || !strings.Contains(cs[1].Evidence, "SLOWLOG #2 SET 12.0 ms logged while the server waited 160.0 ms for a CPU between the samples") {
		t.Errorf("%s: %+v", kinds(cs), cs)
	}
	e.ProcAfter.RunDelay.V -= 155 * ms // 5 ms: under half the SET's 12
	if cs, _ := Explain(e); kinds(cs) != "command,command" || cs[1].What != "SET" {
		t.Errorf("%s: %+v", kinds(cs), cs)
	}
	// A SET the host held up, with the wait too short a part of the
	// spike to be a cause: said among what was checked.
	e = local(quiet(40 * ms))
	e.ProcAfter.RunDelay.V += 8 * ms
	e.SlowLog = []SlowEntry{{ID: 2, Time: serverSec, Duration: 12 * ms, Command: "SET"}}
	cs, checked := Explain(e)
	if kinds(cs) != "unexplained" || !strings.Contains(strings.Join(checked, "|"), "run delay +8.0 ms between the samples (/proc/PID/schedstat); SLOWLOG #2 SET 12.0 ms logged while the server waited 8.0 ms for a CPU between the samples") {
		t.Errorf("%s: %+v %q", kinds(cs), cs, checked)
	}
}

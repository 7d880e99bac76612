package source

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// infoSections is what the watcher asks for.
var infoSections = []string{"server", "replication", "memory", "stats", "persistence"}

// realInfo starts a server and returns its INFO text for the watcher's sections.
func realInfo(t testing.TB) (string, *server.Server) {
	t.Helper()
	srv := servertest.Start(t, server.Options{})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	text, err := c.Info(ctx, infoSections...).Result()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	return text, srv
}

// referenceFields splits INFO text the obvious way, as an independent
// reference for the parser.
func referenceFields(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[k] = v
		}
	}
	return m
}

func TestParseInfoRealServer(t *testing.T) {
	text, srv := realInfo(t)
	in := ParseInfo(text)
	ref := referenceFields(text)

	ints := map[string]Opt[int64]{
		"process_id": in.ProcessID, "uptime_in_seconds": in.Uptime,
		"used_memory": in.UsedMemory, "used_memory_rss": in.RSS, "maxmemory": in.MaxMemory,
		"total_commands_processed": in.TotalCommands, "instantaneous_ops_per_sec": in.InstOps,
		"latest_fork_usec": in.LatestForkUsec, "total_forks": in.TotalForks,
		"loading": in.Loading, "rdb_bgsave_in_progress": in.RDBInProgress,
		"rdb_current_bgsave_time_sec": in.RDBCurrentTime, "rdb_last_bgsave_time_sec": in.RDBLastTime,
		"rdb_saves": in.RDBSaves, "rdb_last_cow_size": in.RDBLastCOW,
		"forkless_estimated_seconds_remaining": in.ForklessETA,
		"aof_enabled":                          in.AOFEnabled, "aof_rewrite_in_progress": in.AOFRewriteInProgress,
		"aof_rewrite_scheduled": in.AOFRewriteScheduled, "aof_current_rewrite_time_sec": in.AOFCurrentRewriteTime,
		"aof_last_rewrite_time_sec": in.AOFLastRewriteTime, "aof_last_cow_size": in.AOFLastCOW,
		"current_cow_size": in.CurrentCOW, "current_cow_size_age": in.CurrentCOWAge,
		"current_cow_peak": in.CurrentCOWPeak, "current_save_keys_processed": in.KeysProcessed,
		"current_save_keys_total": in.KeysTotal, "allocator_rss_bytes": in.AllocatorRSS,
		"expire_cycle_cpu_milliseconds": in.ExpireCycleCPUms, "expired_keys": in.ExpiredKeys,
		"expired_time_cap_reached_count": in.ExpireCapReached, "evicted_keys": in.EvictedKeys,
		"total_eviction_exceeded_time": in.EvictionOverMs, "total_active_defrag_time": in.DefragTimeMs,
		"lazyfree_pending_objects": in.LazyFreePending, "aof_delayed_fsync": in.AOFDelayedFsync,
	}
	for k, got := range ints {
		v, ok := ref[k]
		if !ok {
			if got.OK {
				t.Errorf("%s: server does not report it, parsed %v", k, got.V)
			}
			continue
		}
		want, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: reference value %q: %v", k, v, err)
		}
		if !got.OK || got.V != want {
			t.Errorf("%s = %+v, want %d", k, got, want)
		}
	}
	strs := map[string]string{
		"role": in.Role, "rdb_last_bgsave_status": in.RDBLastStatus,
		"aof_last_bgrewrite_status": in.AOFLastStatus, "server_name": in.ServerName,
		"rdb_current_bgsave_type": in.RDBCurrentType, "rdb_last_bgsave_type": in.RDBLastType,
	}
	for k, got := range strs {
		if got != ref[k] {
			t.Errorf("%s = %q, want %q", k, got, ref[k])
		}
	}
	wantVersion := ref["valkey_version"]
	if wantVersion == "" {
		wantVersion = ref["redis_version"]
	}
	if in.Version == "" || in.Version != wantVersion {
		t.Errorf("Version = %q, want %q", in.Version, wantVersion)
	}
	if in.ProcessID.V != int64(srv.PID()) {
		t.Errorf("ProcessID = %d, want the server's pid %d", in.ProcessID.V, srv.PID())
	}
	if !in.UsedMemory.OK || in.UsedMemory.V <= 0 || in.Role != "master" {
		t.Errorf("used_memory %+v role %q", in.UsedMemory, in.Role)
	}
	if p, ok := ref["current_fork_perc"]; ok {
		want, _ := strconv.ParseFloat(p, 64)
		if in.CurrentForkPerc != Some(want) {
			t.Errorf("current_fork_perc = %+v, want %v", in.CurrentForkPerc, want)
		}
	}
}

// A Valkey 9.2 persistence section (forkless fields) and odd lines.
const valkeyInfo = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.2.0\r\n" +
	"process_id:42\r\n\r\n# Persistence\r\nrdb_bgsave_in_progress:1\r\nrdb_current_bgsave_type:forkless\r\n" +
	"rdb_last_bgsave_type:fork\r\nforkless_estimated_seconds_remaining:17\r\ncurrent_fork_perc:12.50\r\n" +
	"current_save_keys_processed:1000\r\ncurrent_save_keys_total:8000\r\n" +
	"used_memory:\r\nused_memory_rss:12x\r\nno colon here\r\n:empty key\r\nmaxmemory:-\r\n" +
	"total_forks:99999999999999999999\r\nuptime_in_seconds:+5\r\nrole:weird\r\n#comment:1\r\nloading:0"

func TestParseInfoValkeyAndJunk(t *testing.T) {
	in := ParseInfo(valkeyInfo)
	if in.ServerName != "valkey" || in.Version != "9.2.0" {
		t.Errorf("server %q version %q, want valkey 9.2.0 (valkey_version wins over redis_version)", in.ServerName, in.Version)
	}
	if in.RDBCurrentType != "forkless" || in.RDBLastType != "fork" || in.ForklessETA != Some[int64](17) {
		t.Errorf("forkless fields: %q %q %+v", in.RDBCurrentType, in.RDBLastType, in.ForklessETA)
	}
	if in.CurrentForkPerc != Some(12.5) || in.KeysProcessed != Some[int64](1000) || in.KeysTotal != Some[int64](8000) {
		t.Errorf("progress: %+v %+v %+v", in.CurrentForkPerc, in.KeysProcessed, in.KeysTotal)
	}
	for name, o := range map[string]Opt[int64]{"used_memory": in.UsedMemory, "rss": in.RSS, "maxmemory": in.MaxMemory, "total_forks": in.TotalForks} {
		if o.OK {
			t.Errorf("%s: malformed value parsed as %d, want absent", name, o.V)
		}
	}
	if in.Uptime != Some[int64](5) || in.Loading != Some[int64](0) || in.Role != "weird" || in.ProcessID != Some[int64](42) {
		t.Errorf("uptime %+v loading %+v role %q pid %+v", in.Uptime, in.Loading, in.Role, in.ProcessID)
	}
	// Absent is not zero.
	if in.AOFEnabled.OK || in.TotalCommands.OK {
		t.Error("fields missing from the text are present")
	}
}

func TestParseInfoIntoReuse(t *testing.T) {
	var in Info
	ParseInfoInto(&in, valkeyInfo)
	ParseInfoInto(&in, "# Server\nredis_version:7.0.15\nused_memory:10\n")
	if in.ServerName != "" || in.Version != "7.0.15" || in.ForklessETA.OK || in.UsedMemory != Some[int64](10) {
		t.Errorf("old fields leak into a reused Info: %+v", in)
	}
}

func TestParseInfoIntoDoesNotAllocate(t *testing.T) {
	text, _ := realInfo(t)
	var in Info
	ParseInfoInto(&in, text)
	// A fresh copy of the same text, as each INFO reply is: the parser
	// must reuse its previous strings, not copy them again.
	text2 := strings.Clone(text)
	allocs := testing.AllocsPerRun(100, func() { ParseInfoInto(&in, text2) })
	if allocs != 0 {
		t.Errorf("ParseInfoInto allocates %.1f times per call, want 0", allocs)
	}
}

func FuzzParseInfo(f *testing.F) {
	text, _ := realInfo(f)
	f.Add(text)
	f.Add(valkeyInfo)
	f.Add("")
	f.Add("a:b\r\n:\r\n#\r\nused_memory:-9223372036854775808\n")
	f.Fuzz(func(t *testing.T, s string) {
		in := ParseInfo(s)
		// Parsing into a used Info gives the same result as into a new one.
		dirty := ParseInfo(valkeyInfo)
		ParseInfoInto(&dirty, s)
		if dirty != in {
			t.Errorf("ParseInfoInto on a reused Info differs:\n%+v\n%+v", dirty, in)
		}
		if in.UsedMemory.OK && !strings.Contains(s, "used_memory:") {
			t.Errorf("used_memory present without the field in the text")
		}
	})
}

func BenchmarkParseInfoInto(b *testing.B) {
	text, _ := realInfo(b)
	var in Info
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ParseInfoInto(&in, text)
	}
}

func TestParseInfoReplicas(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Replication\r\nrole:master\r\nconnected_slaves:10\r\n")
	for i := range 10 {
		state := "online"
		if i == 9 {
			state = "wait_bgsave" // beyond the replicas kept, still counted
		}
		b.WriteString("slave" + strconv.Itoa(i) + ":ip=10.0.0." + strconv.Itoa(i) + ",port=" + strconv.Itoa(6380+i) + ",state=" + state + ",offset=1,lag=0\r\n")
	}
	b.WriteString("slavex:ip=1.2.3.4,port=1,state=wait_bgsave\r\nslave:ip=1.2.3.4\r\nslave11:garbage,port=x,=,state=\r\nmaster_replid:abc\r\n")
	in := ParseInfo(b.String())
	if in.ConnectedReplicas != Some[int64](10) || in.NumReplicas != 11 || in.ReplicasWaitingBGSave != 1 {
		t.Fatalf("connected %+v, %d lines, %d waiting", in.ConnectedReplicas, in.NumReplicas, in.ReplicasWaitingBGSave)
	}
	for i := range MaxReplicas {
		want := Replica{IP: "10.0.0." + strconv.Itoa(i), Port: Some(int64(6380 + i)), State: "online"}
		if in.Replicas[i] != want {
			t.Errorf("replica %d: %+v, want %+v", i, in.Replicas[i], want)
		}
	}
	// Replicas that left do not linger in a reused Info.
	ParseInfoInto(&in, "connected_slaves:1\r\nslave0:ip=::1,port=7000,state=send_bulk\r\n")
	if in.NumReplicas != 1 || in.Replicas[0] != (Replica{IP: "::1", Port: Some[int64](7000), State: "send_bulk"}) || in.Replicas[1] != (Replica{}) || in.ReplicasWaitingBGSave != 0 {
		t.Errorf("reused: %d %+v", in.NumReplicas, in.Replicas[:2])
	}
}

package standin

import (
	"fmt"
	"strings"
	"time"
)

// infoSections are INFO's sections in the order the server writes them;
// INFO with no argument gives these.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cluster", "keyspace"}

// info is INFO [section ...].
func (st *state) info(args []string) reply {
	want := map[string]bool{}
	for _, a := range args {
		a = strings.ToLower(a)
		if a == "all" || a == "everything" || a == "default" {
			for _, s := range infoSections {
				want[s] = true
			}
			continue
		}
		want[a] = true
	}
	if len(args) == 0 {
		for _, s := range infoSections {
			want[s] = true
		}
	}
	if want["persistence"] {
		st.samples++
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(sec[:1]) + sec[1:] + "\r\n")
		for _, kv := range st.section(sec) {
			b.WriteString(kv[0] + ":" + kv[1] + "\r\n")
		}
	}
	return bulk(b.String())
}

type field = [2]string

func num[T int | int64](v T) string { return fmt.Sprint(v) }

func (st *state) section(name string) []field {
	switch name {
	case "server":
		return []field{{"redis_version", "7.2.4"}, {"server_name", "valkey"}, {"valkey_version", "9.2.0"},
			{"redis_mode", "standalone"}, {"process_id", num(ImpossiblePID)}, {"tcp_port", num(st.port)},
			{"server_time_usec", num(st.wallStart.Add(st.now).UnixMicro())},
			{"uptime_in_seconds", num(int64(st.now / time.Second))}}
	case "clients":
		return []field{{"connected_clients", num(st.clients)}, {"blocked_clients", num(st.blocked)}}
	case "memory":
		used := st.usedMemory()
		return []field{{"used_memory", num(used)}, {"used_memory_rss", num(used + rssOverUsed)},
			{"total_system_memory", num(int64(24 << 30))}, {"mem_clients_slaves", "0"}, {"maxmemory", st.cfg["maxmemory"]}}
	case "persistence":
		return st.persistence()
	case "stats":
		return []field{{"total_commands_processed", num(st.commands)}, {"instantaneous_ops_per_sec", "0"},
			{"latest_fork_usec", num(st.forkUsec)}, {"total_forks", num(st.totalForks)}}
	case "replication":
		f := []field{{"role", "master"}}
		if st.replica == "" {
			return append(f, field{"connected_slaves", "0"})
		}
		ip, port, _ := strings.Cut(st.replica, ":")
		return append(f, field{"connected_slaves", "1"},
			field{"slave0", "ip=" + ip + ",port=" + port + ",state=" + st.replicaState + ",offset=0,lag=0"})
	case "cluster":
		return []field{{"cluster_enabled", "0"}}
	case "keyspace":
		var f []field
		for i, db := range st.dbs {
			if len(db) > 0 {
				f = append(f, field{fmt.Sprintf("db%d", i), fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", len(db))})
			}
		}
		return f
	}
	return nil
}

// persistence is INFO persistence as the real 9.2 source writes it.
func (st *state) persistence() []field {
	sv := st.save
	inProgress, curType, curTime := 0, "none", int64(-1)
	processed, total, eta, perc := 0, 0, int64(-1), 0.0
	var cow, cowAge int64
	if sv != nil {
		inProgress, curType, curTime = 1, sv.method, int64((st.now-sv.start)/time.Second)
		processed = sv.stored
		if !sv.sync {
			total = len(sv.keys)
		}
		if total > 0 {
			perc = 100 * float64(processed) / float64(total)
		}
		eta = st.forklessETA()
		if sv.method == "fork" {
			cow, cowAge = sv.cowShown, int64(st.now/time.Second)-sv.cowAt
		}
	}
	f := []field{
		{"loading", "0"}, {"async_loading", "0"},
		{"current_cow_peak", num(cow)}, {"current_cow_size", num(cow)}, {"current_cow_size_age", num(cowAge)},
		{"current_fork_perc", fmt.Sprintf("%.2f", perc)},
		{"current_save_keys_processed", num(processed)}, {"current_save_keys_total", num(total)},
		{"rdb_changes_since_last_save", num(st.dirty)}, {"rdb_bgsave_in_progress", num(inProgress)},
		{"rdb_last_save_time", num(st.lastSaveTime)}, {"rdb_last_bgsave_status", st.lastStatus},
		{"rdb_last_bgsave_time_sec", num(st.lastBgTime)}, {"rdb_current_bgsave_time_sec", num(curTime)},
		{"rdb_saves", num(st.rdbSaves)}, {"rdb_last_cow_size", num(st.lastCOW)},
		{"rdb_current_bgsave_type", curType}, {"rdb_last_bgsave_type", st.lastType},
		{"forkless_estimated_seconds_remaining", num(eta)},
	}
	aofCur := int64(-1)
	if st.aofRunning {
		aofCur = int64((st.now - st.aofStart) / time.Second)
	}
	return append(f, []field{
		{"aof_enabled", map[bool]string{true: "1", false: "0"}[st.cfg["appendonly"] == "yes"]},
		{"aof_rewrite_in_progress", map[bool]string{true: "1", false: "0"}[st.aofRunning]},
		{"aof_rewrite_scheduled", map[bool]string{true: "1", false: "0"}[st.aofScheduled]},
		{"aof_last_rewrite_time_sec", num(st.aofLastTime)}, {"aof_current_rewrite_time_sec", num(aofCur)},
		{"aof_last_bgrewrite_status", "ok"}, {"aof_rewrites", num(st.aofRewrites)},
		{"aof_last_cow_size", num(st.aofLastCOW)},
		{"module_fork_in_progress", "0"}, {"module_fork_last_cow_size", "0"},
	}...)
}

// forklessETA is forkless_estimated_seconds_remaining: whole seconds,
// floored, from the save thread's own live count (not the stored one);
// -1 when no forkless BGSAVE runs, before its first key, and in its tail.
// A sync has none.
func (st *state) forklessETA() int64 {
	sv := st.save
	if sv == nil || sv.method != "forkless" || sv.sync || sv.pos == 0 || sv.tail {
		return -1
	}
	left := len(sv.keys) - sv.pos
	return int64(float64(st.now-sv.start) / float64(sv.pos) * float64(left) / float64(time.Second))
}

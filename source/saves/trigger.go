package saves

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// triggerOf says who started the save of kind that s is the first sample
// to show running, or, when missed, the save that ran entirely between
// prev and s. prev is nil when the save was already running when vkwatch
// connected. The evidence, strongest first:
//
//  1. vkwatch's own command (a key, or bench): an accepted BGSAVE or
//     BGREWRITEAOF seen by ObserveCommand (a refused one starts nothing,
//     so an accepted one is this save);
//  2. a replica waiting for a full sync (INFO replication: a slaveN line in
//     state wait_bgsave in s or just before it, or send_bulk right after a
//     missed disk save), for an RDB save;
//  3. for an AOF rewrite, the server's own reasons: appendonly turned on,
//     or auto-aof-rewrite-percentage / -min-size reached by
//     aof_current_size over aof_base_size;
//  4. for an RDB save, a `save <seconds> <changes>` rule that came due:
//     rdb_changes_since_last_save and the time since rdb_last_save_time
//     (by the server's clock, server_time_usec) both reached;
//  5. otherwise another client (TriggerOther), but only when each of the
//     above could be checked; when one could not (CONFIG GET refused, an
//     older server without the fields), the trigger is unknown (Kind "").
//
// A save started when vkwatch connected, or by another client while a
// rule was due or a replica was waiting, is labelled by that evidence: the
// server would have started it then anyway.
func (t *Tracker) triggerOf(kind source.SaveKind, prev, s *source.Sample, missed bool) source.Trigger {
	if kind == source.SaveSlotMigration {
		// The server says whose fork it is: no command of vkwatch's,
		// no replica, no rule starts it.
		return source.Trigger{Kind: source.TriggerSlotMigration, Detail: "slot migration (slot_migration_fork_in_progress)"}
	}
	if pc := t.pending; pc != nil && kind != source.SaveForklessSync && pc.aof == (kind == source.SaveAOF) {
		t.pending = nil
		return source.Trigger{Kind: source.TriggerUser, Detail: pc.command}
	}
	known := true
	if kind == source.SaveAOF {
		tr, ok, k := autoAOF(prev, s, missed)
		if ok {
			return tr
		}
		known = known && k
	} else {
		r, ok, k := waitingReplica(prev, s, missed)
		if ok {
			return source.Trigger{Kind: source.TriggerReplica, Detail: replicaDetail(r, s.Config.ReplDisklessSync)}
		}
		known = known && k
		rule, ok, k := dueRule(prev, s, missed)
		if ok {
			return source.Trigger{Kind: source.TriggerSchedule, Detail: rule}
		}
		known = known && k
	}
	if !known {
		return source.Trigger{}
	}
	return source.Trigger{Kind: source.TriggerOther}
}

// waitingReplica finds a replica waiting for a full sync around the start
// of a save; known says INFO replication was there to look at.
func waitingReplica(prev, s *source.Sample, missed bool) (r source.Replica, ok, known bool) {
	known = s.Info.ConnectedReplicas.OK
	if r, ok := replicaIn(&s.Info, "wait_bgsave"); ok {
		return r, true, known
	}
	if missed {
		// A disk save that ran between two samples: the replica is
		// receiving the file now.
		if r, ok := replicaIn(&s.Info, "send_bulk"); ok {
			return r, true, known
		}
	}
	if prev != nil {
		// With repl-diskless-sync the primary waits
		// repl-diskless-sync-delay with the replica in wait_bgsave, then
		// forks.
		if r, ok := replicaIn(&prev.Info, "wait_bgsave"); ok {
			return r, true, known
		}
	}
	return source.Replica{}, false, known
}

// replicaIn returns the first replica of in in state.
func replicaIn(in *source.Info, state string) (source.Replica, bool) {
	for i := range min(in.NumReplicas, source.MaxReplicas) {
		if in.Replicas[i].State == state {
			return in.Replicas[i], true
		}
	}
	if state == "wait_bgsave" && in.ReplicasWaitingBGSave > 0 {
		return source.Replica{State: state}, true // beyond the replicas kept
	}
	return source.Replica{}, false
}

func replicaDetail(r source.Replica, diskless source.Opt[bool]) string {
	d := "replica"
	if r.IP != "" && r.Port.OK {
		d += " " + net.JoinHostPort(r.IP, strconv.FormatInt(r.Port.V, 10))
	}
	if v, ok := diskless.Get(); ok {
		if v {
			d += ", diskless"
		} else {
			d += ", disk"
		}
	}
	return d
}

// autoAOF tells whether the server rewrote its AOF by itself; known says
// the settings and sizes needed to tell were there.
func autoAOF(prev, s *source.Sample, missed bool) (source.Trigger, bool, bool) {
	if prev != nil {
		a, b := prev.Info.AOFEnabled, s.Info.AOFEnabled
		if a.OK && b.OK && a.V == 0 && b.V == 1 {
			return source.Trigger{Kind: source.TriggerAOF, Detail: "appendonly turned on"}, true, true
		}
	}
	// The sizes as the server's check saw them: they stay until a rewrite
	// ends, so a missed rewrite is judged by the sample before it.
	in := &s.Info
	if missed {
		in = &prev.Info
	}
	if e := in.AOFEnabled; e.OK && e.V == 0 {
		return source.Trigger{}, false, true // the server rewrites only an AOF that is on
	}
	perc, ok1 := s.Config.AutoAOFRewritePerc.Get()
	minSize, ok2 := s.Config.AutoAOFRewriteMinSize.Get()
	cur, ok3 := in.AOFCurrentSize.Get()
	base, ok4 := in.AOFBaseSize.Get()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return source.Trigger{}, false, false
	}
	// The server's own test (serverCron): growth over the base size of
	// the last rewrite, a base of 0 counting as 1.
	if perc > 0 && cur > minSize && cur*100/max(base, 1)-100 >= perc {
		return source.Trigger{Kind: source.TriggerAOF, Detail: fmt.Sprintf("auto-aof-rewrite-percentage %d: aof_current_size %d, aof_base_size %d", perc, cur, base)}, true, true
	}
	return source.Trigger{}, false, true
}

// dueRule finds a `save <seconds> <changes>` rule that had come due; known
// says the schedule and counters were there to check.
//
// The changes are those the server counted when it forked: while the save
// runs rdb_changes_since_last_save keeps growing from there (it drops when
// the save ends), so the first sample's count is taken; for a missed save,
// the counts before and after it added up. The seconds are from
// rdb_last_save_time of the sample before the save to the server's clock.
func dueRule(prev, s *source.Sample, missed bool) (string, bool, bool) {
	sched, ok := s.Config.SaveSchedule.Get()
	if !ok {
		return "", false, false
	}
	base := &s.Info
	if prev != nil {
		base = &prev.Info
	}
	last, ok1 := base.RDBLastSaveTime.Get()
	changes, ok2 := s.Info.RDBChangesSinceSave.Get()
	if missed {
		var ok3 bool
		var before int64
		before, ok3 = prev.Info.RDBChangesSinceSave.Get()
		changes += before
		ok2 = ok2 && ok3
	}
	if !ok1 || !ok2 {
		return "", false, false
	}
	now := s.At.Unix()
	if us, ok := s.Info.ServerTimeUsec.Get(); ok {
		now = us / 1e6
	}
	f := strings.Fields(sched)
	for i := 0; i+1 < len(f); i += 2 {
		sec, err1 := strconv.ParseInt(f[i], 10, 64)
		ch, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 != nil || err2 != nil {
			return "", false, false // not a schedule this code understands
		}
		if changes >= ch && now-last >= sec {
			return "save " + f[i] + " " + f[i+1], true, true
		}
	}
	return "", false, true
}

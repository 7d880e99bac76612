package saves

import "github.com/vkwatch/vkwatch/source"

// How an RDB save ended, and what says so. The server's last-save fields
// (rdb_last_bgsave_status, rdb_last_cow_size, rdb_last_bgsave_time_sec,
// ...) belong to whichever save last set them: a save that was cancelled
// or aborted leaves most of them at an earlier save's values, and a
// forkless save never touches rdb_last_cow_size. So a report reads them
// only for the save that set them, and says what its status rests on.
//
// What each end sets, read in the servers' sources (VALKEY.md) and seen on
// Redis 7.0.15 here:
//
//   - ok: rdb_last_bgsave_status ok, rdb_last_save_time (the end's second),
//     rdb_changes_since_last_save reset (to the changes made since the
//     save began), rdb_last_bgsave_time_sec; a fork's child reports
//     rdb_last_cow_size;
//   - err: rdb_last_bgsave_status err and rdb_last_bgsave_time_sec;
//   - cancelled (BGSAVE CANCEL, Valkey 8.1+): rdb_last_bgsave_time_sec
//     only, the status and type stay;
//   - aborted (FLUSHALL / FLUSHDB, a replica's diskless load, a shutdown):
//     status, type, rdb_last_save_time and the change counter stay as they
//     were (Redis 7.0 kills the child with SIGUSR1, which is no error, and
//     sets rdb_last_bgsave_time_sec).

// lastFields are the last-save fields as a save began: what its end is
// compared with.
type lastFields struct {
	status string
	// saveTime is rdb_last_save_time, bgTime rdb_last_bgsave_time_sec,
	// changes rdb_changes_since_last_save.
	saveTime, bgTime, changes source.Opt[int64]
	// serverSec is the server's clock (server_time_usec, in seconds) at
	// the sample before the save: absent when the save was already
	// running at the first sample vkwatch took.
	serverSec source.Opt[int64]
}

// lastOf reads the last-save fields of in; before says in is the sample
// just before the save (its clock then says the save began later).
func lastOf(in *source.Info, before bool) lastFields {
	f := lastFields{status: in.RDBLastStatus, saveTime: in.RDBLastSaveTime, bgTime: in.RDBLastTime, changes: in.RDBChangesSinceSave}
	if us, ok := in.ServerTimeUsec.Get(); ok && before {
		f.serverSec = source.Some(us / 1_000_000)
	}
	return f
}

// saved is what the counters say of whether a save wrote its file.
type saved int

const (
	savedUnknown saved = iota
	savedYes
	savedNo
)

// wasSaved tells from the counters whether the save that began with base
// and ended with in wrote its file; lastChanges is
// rdb_changes_since_last_save in the last sample that showed it running.
//
// rdb_last_save_time moves on a successful end only, to the end's second:
// advanced, the save wrote its file. Not advanced, it did not, provided
// the save began in a later second than the last successful one (the
// server's clock before the save says so; two saves ending in one second
// would otherwise leave the field as it was). A change counter that
// dropped below its last value was reset: saved too. A counter that did
// not drop proves nothing alone (writes after the last sample count
// again after a reset), so it only adds to the evidence.
func wasSaved(base lastFields, lastChanges source.Opt[int64], in *source.Info) (saved, string) {
	now, then := in.RDBLastSaveTime, base.saveTime
	if now.OK && then.OK && now.V > then.V {
		return savedYes, "rdb_last_save_time advanced"
	}
	ch := in.RDBChangesSinceSave
	if ch.OK && lastChanges.OK && ch.V < lastChanges.V {
		return savedYes, "rdb_changes_since_last_save reset"
	}
	if now.OK && then.OK && base.serverSec.OK && base.serverSec.V > then.V {
		ev := "rdb_last_save_time not advanced"
		if ch.OK && lastChanges.OK {
			ev += ", rdb_changes_since_last_save not reset"
		}
		return savedNo, ev
	}
	return savedUnknown, ""
}

// rdbVerdict is the status of an RDB save (BGSAVE, fork or forkless) that
// began with base and ended with in, and the evidence it rests on.
// cancelled says vkwatch's own BGSAVE CANCEL of it was answered
// "Background saving cancelled".
func rdbVerdict(base lastFields, lastChanges source.Opt[int64], in *source.Info, cancelled bool) (status, evidence string) {
	s, why := wasSaved(base, lastChanges, in)
	status = in.RDBLastStatus
	switch {
	case s == savedYes && status == source.StatusOK:
		if cancelled {
			why += ": it ended before BGSAVE CANCEL took effect"
		}
		return source.StatusOK, why + ", rdb_last_bgsave_status ok"
	case cancelled:
		return source.StatusCancelled, `BGSAVE CANCEL answered "Background saving cancelled"`
	case status == source.StatusErr:
		why = "rdb_last_bgsave_status err"
		if base.status == source.StatusErr {
			why += ", as before the save (an abort would leave it so too)"
		}
		return source.StatusErr, why
	case s == savedNo:
		return source.StatusAborted, why + ", rdb_last_bgsave_status unchanged: the server stopped the save " +
			"without failing it (FLUSHALL or FLUSHDB, a replica's diskless load, a shutdown, another client's BGSAVE CANCEL)"
	case status == "":
		return "", "no rdb_last_bgsave_status"
	}
	return status, "rdb_last_bgsave_status " + status + " (nothing else to check it by: " + uncheckable(base, in) + ")"
}

// uncheckable says why wasSaved could not tell.
func uncheckable(base lastFields, in *source.Info) string {
	switch {
	case !in.RDBLastSaveTime.OK || !base.saveTime.OK:
		return "no rdb_last_save_time"
	case !base.serverSec.OK:
		return "no server_time_usec before the save began"
	}
	return "it began in the second the last save ended"
}

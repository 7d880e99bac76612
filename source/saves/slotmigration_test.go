package saves

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// Valkey 9.0's atomic slot migration forks a child of its own. Redis 7.0
// here lacks it, so the parse and the trigger are tested from INFO text:
// a save of its own kind, started by the slot migration, whatever else
// was due, and reported without the RDB save's last figures (INFO keeps
// none for this child).
func TestSlotMigrationFork(t *testing.T) {
	const valkey90 = "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:0\r\naof_rewrite_in_progress:0\r\nslot_migration_fork_in_progress:1\r\ncurrent_cow_size:1048576\r\n"
	in := source.ParseInfo(valkey90)
	if in.SlotMigrationFork != source.Some[int64](1) || in.RDBInProgress != source.Some[int64](0) {
		t.Fatalf("parsed %+v %+v", in.SlotMigrationFork, in.RDBInProgress)
	}
	if in := source.ParseInfo(strings.Replace(valkey90, "slot_migration_fork_in_progress:1\r\n", "", 1)); in.SlotMigrationFork.OK {
		t.Errorf("absent field read as %+v", in.SlotMigrationFork)
	}
	q := tellingSeq()
	tr := NewTracker("h", "h")
	tr.Observe(q.tick(func(in *source.Info) { in.SlotMigrationFork = source.Some[int64](0) }))
	// A BGSAVE of vkwatch's accepted just before: the fork that shows is
	// the slot migration's all the same (the server says so).
	tr.ObserveCommand(&source.CommandResult{Command: "BGSAVE", Reply: "Background saving started", Sent: q.off, Done: q.off})
	s := q.tick(func(in *source.Info) {
		in.SlotMigrationFork, in.CurrentCOW = source.Some[int64](1), source.Some[int64](1<<20)
		in.TotalForks.V++
	})
	started, _ := tr.Observe(s)
	if !started || s.Save == nil || s.Save.Kind != source.SaveSlotMigration || s.Save.Trigger.Kind != source.TriggerSlotMigration {
		t.Fatalf("start: %v %+v", started, s.Save)
	}
	if got := s.Save.Trigger.Detail; got != "slot migration (slot_migration_fork_in_progress)" {
		t.Errorf("detail %q", got)
	}
	_, rep := tr.Observe(q.tick(func(in *source.Info) {
		in.SlotMigrationFork, in.CurrentCOW = source.Some[int64](0), source.Some[int64](0)
	}))
	if rep == nil || rep.Kind != source.SaveSlotMigration || rep.Trigger.Kind != source.TriggerSlotMigration {
		t.Fatalf("report %+v", rep)
	}
	if rep.COW.OK || rep.Status != "" || rep.ServerSeconds.OK {
		t.Errorf("the RDB save's last figures in a slot migration's report: cow %+v status %q seconds %+v", rep.COW, rep.Status, rep.ServerSeconds)
	}
}

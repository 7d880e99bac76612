package watch

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// Who started a save, on real servers: each test starts the save the way
// it happens in the field and checks the watcher's label.

// infoSections are the INFO sections the watcher asks for (infoArgs
// without the command's name).
var infoSections = func() (sections []string) {
	for _, a := range infoArgs[1:] {
		sections = append(sections, a.(string))
	}
	return sections
}()

// nextReport waits for the next save report, checking on the way that
// every sample of the running save after the first carries the report's
// trigger (the first may not know a late answer yet).
func (x *watch) nextReport(t *testing.T, within time.Duration) *source.SaveReport {
	t.Helper()
	var triggers []source.Trigger
	ev := x.next(t, within, "a save report", func(ev source.Event) bool {
		if ev.Kind == source.EventSample && ev.Sample.Save != nil {
			triggers = append(triggers, ev.Sample.Save.Trigger)
		}
		return ev.Kind == source.EventSaveEnded
	})
	for i, tr := range triggers {
		if i > 0 && tr != ev.Report.Trigger {
			t.Errorf("progress %d of %d says trigger %+v, the report %+v", i, len(triggers), tr, ev.Report.Trigger)
		}
	}
	return ev.Report
}

func TestTriggerUserBGSAVE(t *testing.T) {
	_, x, c := saveServer(t, 20000, 30)
	x.next(t, 10*time.Second, "a sample with the settings", sampleWhere(func(s *source.Sample) bool { return s.Config.SaveSchedule.OK }))
	if r := x.w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	rep := x.nextReport(t, 60*time.Second)
	if rep.Trigger != (source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}) {
		t.Errorf("trigger %+v, want the user's BGSAVE", rep.Trigger)
	}
	// The fork pause is this fork's, as the server reports it.
	stats := source.ParseInfo(c.Info(context.Background(), "stats").Val())
	if want := source.Some(time.Duration(stats.LatestForkUsec.V) * time.Microsecond); rep.ForkPause != want || want.V <= 0 {
		t.Errorf("fork pause %+v, latest_fork_usec says %+v", rep.ForkPause, want)
	}
	if len(rep.Curve) == 0 || !rep.PeakCOW.OK {
		t.Errorf("no curve (%d points) or peak COW %+v", len(rep.Curve), rep.PeakCOW)
	}
	for i := 1; i < len(rep.Curve); i++ {
		if p, q := rep.Curve[i-1], rep.Curve[i]; q.Progress < p.Progress || q.Elapsed <= p.Elapsed {
			t.Errorf("curve goes back: %+v then %+v", p, q)
		}
	}

	// A BGSAVE from another client is not the user's.
	if err := c.BgSave(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if rep := x.nextReport(t, 60*time.Second); rep.Trigger != (source.Trigger{Kind: source.TriggerOther}) {
		t.Errorf("another client's BGSAVE: trigger %+v", rep.Trigger)
	}
}

func TestTriggerAOFRewrites(t *testing.T) {
	_, x, c := saveServer(t, 10000, 50)
	ctx := context.Background()
	x.next(t, 10*time.Second, "a sample with the settings", sampleWhere(func(s *source.Sample) bool { return s.Config.AutoAOFRewritePerc.OK }))

	// The user's BGREWRITEAOF.
	if r := x.w.Do(ctx, "BGREWRITEAOF"); !r.OK() {
		t.Fatal(r.Err)
	}
	rep := x.nextReport(t, 60*time.Second)
	if rep.Kind != source.SaveAOF || rep.Trigger != (source.Trigger{Kind: source.TriggerUser, Detail: "BGREWRITEAOF"}) {
		t.Errorf("user's rewrite: kind %q trigger %+v", rep.Kind, rep.Trigger)
	}

	// Turning the AOF on makes the server write it by a rewrite.
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	rep = x.nextReport(t, 60*time.Second)
	if rep.Kind != source.SaveAOF || rep.Trigger != (source.Trigger{Kind: source.TriggerAOF, Detail: "appendonly turned on"}) {
		t.Errorf("appendonly yes: kind %q trigger %+v", rep.Kind, rep.Trigger)
	}

	// auto-aof-rewrite: the AOF grows past twice its base and past 1 MB.
	x.configSet(t, c, "auto-aof-rewrite-min-size", "1000000", func(s *source.Sample) bool {
		return s.Config.AutoAOFRewriteMinSize == source.Some[int64](1000000)
	})
	base := source.ParseInfo(c.Info(ctx, "persistence").Val()).AOFBaseSize
	if !base.OK {
		t.Fatal("no aof_base_size with the AOF on")
	}
	value := strings.Repeat("v", 300)
	for written := int64(0); written < 2*base.V+1000000; {
		p := c.Pipeline()
		for i := range 1000 {
			p.Set(ctx, "key:"+strconv.Itoa(i), value, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		written += 1000 * 340
	}
	rep = x.nextReport(t, 60*time.Second)
	if rep.Kind != source.SaveAOF || rep.Trigger.Kind != source.TriggerAOF || !strings.HasPrefix(rep.Trigger.Detail, "auto-aof-rewrite-percentage 100: ") {
		t.Errorf("auto rewrite: kind %q trigger %+v", rep.Kind, rep.Trigger)
	}
}

func TestTriggerSaveSchedule(t *testing.T) {
	_, x, c := saveServer(t, 10000, 50)
	ctx := context.Background()
	// The server saves by itself once a second has passed since its last
	// save and one key has changed.
	x.configSet(t, c, "save", "1 1", func(s *source.Sample) bool { return s.Config.SaveSchedule == source.Some("1 1") })
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rep := x.nextReport(t, 60*time.Second)
	if err := c.ConfigSet(ctx, "save", "").Err(); err != nil {
		t.Fatal(err)
	}
	if rep.Kind != source.SaveFork || rep.Trigger != (source.Trigger{Kind: source.TriggerSchedule, Detail: "save 1 1"}) {
		t.Errorf("kind %q trigger %+v, want the schedule's", rep.Kind, rep.Trigger)
	}
}

// TestTriggerReplicaFullSync: a replica started with --replicaof the
// watched server makes it fork for a full sync, diskless by default, and
// to disk with repl-diskless-sync no.
func TestTriggerReplicaFullSync(t *testing.T) {
	srv, x, c := saveServer(t, 20000, 30)
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "repl-diskless-sync-delay", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for _, diskless := range []bool{true, false} {
		x.configSet(t, c, "repl-diskless-sync", map[bool]string{true: "yes", false: "no"}[diskless], func(s *source.Sample) bool { return s.Config.ReplDisklessSync == source.Some(diskless) })
		replica := servertest.Start(t, server.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(srv.Port)}})
		rep := x.nextReport(t, 60*time.Second)
		want := source.Trigger{Kind: source.TriggerReplica, Detail: "replica 127.0.0.1:" + strconv.Itoa(replica.Port) + ", disk"}
		if diskless {
			want.Detail += "less"
		}
		if rep.Kind != source.SaveFork || rep.Trigger != want {
			t.Errorf("diskless %v: kind %q trigger %+v, want %+v", diskless, rep.Kind, rep.Trigger, want)
		}
		rc := servertest.Client(t, replica)
		servertest.WaitFor(t, 60*time.Second, "the replica to be in sync", func() bool {
			return strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up")
		})
	}
	// The primary's INFO with its replicas still parses without allocating.
	text := c.Info(ctx, infoSections...).Val()
	in := source.ParseInfo(text)
	if in.ConnectedReplicas != source.Some[int64](2) || in.NumReplicas != 2 || in.Replicas[1].IP != "127.0.0.1" || in.Replicas[1].State != "online" || !in.Replicas[1].Port.OK {
		t.Errorf("replicas %+v %+v", in.ConnectedReplicas, in.Replicas[:2])
	}
	text2 := strings.Clone(text)
	if n := testing.AllocsPerRun(100, func() { source.ParseInfoInto(&in, text2) }); n != 0 {
		t.Errorf("ParseInfoInto of a primary with replicas allocates %.1f times", n)
	}
}

package ui

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/watch"
)

// TestRealSaveConfirmedPastCgroupLimit: a real server with writers, whose
// memory cgroup is the fake one of testdata/cgroup-tight (usage 62 MiB,
// limit 64 MiB: a real cgroup limit cannot be set here). Its forecast
// copy-on-write takes it past the limit, so b asks again with the
// numbers; b again sends the real BGSAVE, which runs and is reported.
func TestRealSaveConfirmedPastCgroupLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	x := startRealServer(t, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	real, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeCgroupProc(t, x.srv.PID(), "testdata/cgroup-tight/sys")
	x.watch(t, ctx, watch.Config{Interval: 100 * time.Millisecond,
		Proc: func(pid int64) source.ProcMem {
			m, f := real.Read(pid), fake.Read(pid)
			m.Cgroup, m.CgroupUsage, m.CgroupLimit = f.Cgroup, f.CgroupUsage, f.CgroupLimit
			return m
		}})
	ep, rc := x.ep, x.rc
	m := sized(New(Config{Nodes: nodes(ep.String()), Send: sendVia(ctx, x.w)}), 200, 50)
	feed := x.run(t, ctx, &m, true)
	feed("a forecast past the cgroup limit", func(source.Event) bool {
		return strings.Contains(plainView(m), "headroom would exceed") && strings.Contains(plainView(m), "of 64.0 MiB cgroup limit")
	})
	m, cmd := press(m, "b")
	if cmd != nil {
		run(t, cmd)
	}
	want := regexp.MustCompile(regexp.QuoteMeta(ep.String()) + `: a fork save may need \S+ MiB \(cgroup usage 62.0 MiB \+ forecast COW \((uniform bound|calibrated)\) \S+ \S+\) but the cgroup's limit is 64.0 MiB \(v2:/vkwatch\)`)
	v := plainView(m)
	if !want.MatchString(v) {
		t.Fatalf("no confirmation %s:\n%s", want, v)
	}
	t.Logf("confirmation: %s", want.FindString(v))
	if p := source.ParseInfo(rc.Info(ctx, "persistence").Val()); p.RDBInProgress.V != 0 {
		t.Fatal("a save started before the confirmation")
	}
	m, cmd = press(m, "b")
	run(t, cmd) // the BGSAVE, through the watcher
	feed("the confirmed save's end", func(ev source.Event) bool {
		return ev.Kind == source.EventSaveEnded && ev.Report != nil && ev.Report.Trigger.Kind == source.TriggerUser
	})
	if reps := m.Reports(); len(reps) != 1 || reps[0].Status != "ok" {
		t.Errorf("reports %+v", reps)
	}
}

// fakeCgroupProc is a Reader of a /proc tree in a temporary directory
// where process pid (real: its statm is the real one) lives in cgroup
// v2:/vkwatch of the cgroup2 hierarchy under sys (a testdata tree).
func fakeCgroupProc(t *testing.T, pid int, sys string) *procmem.Reader {
	t.Helper()
	abs, err := filepath.Abs(sys)
	if err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(t.TempDir(), "proc")
	dir := filepath.Join(proc, strconv.Itoa(pid))
	for p, s := range map[string]string{
		filepath.Join(proc, "self", "stat"):      "1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0\n",
		filepath.Join(proc, "self", "mountinfo"): "41 31 0:38 / " + filepath.Join(abs, "fs", "cgroup") + " rw,relatime - cgroup2 cgroup2 rw\n",
		filepath.Join(dir, "cgroup"):             "0::/vkwatch\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join("/proc", strconv.Itoa(pid), "statm"), filepath.Join(dir, "statm")); err != nil {
		t.Fatal(err)
	}
	r, err := procmem.NewAt(proc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

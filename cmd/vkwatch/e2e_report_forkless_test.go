//go:build linux

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server/standin"
)

// TestReportOfForklessSaveOnStandIn: vkwatch save of a forkless save on the
// Valkey 9.2 stand-in (source/server/standin: no 9.2 server can be built
// here), recorded, and its page in Chromium. The save blocks two writers
// on keys its thread holds: the summary says 2 writers blocked, and its
// copy-on-write is none by construction (no child), which the sentences
// say rather than name rdb_last_cow_size (a forkless save leaves it as the
// last fork save set it).
func TestReportOfForklessSaveOnStandIn(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("this test needs Debian's chromium (.ci/run installs it): ", err)
	}
	s := standin.Start(t, standin.Options{ForklessInfra: true, Method: "forkless"})
	s.Load("key:", 4000, 600)
	rec := filepath.Join(t.TempDir(), "forkless.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, vkwatchBin, "save", s.Addr, "--record", rec, "--interval", "50ms")
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	s.Wait(t, "vkwatch's BGSAVE", func(v standin.View) bool { return v.Saving })
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	writes := make(chan error, 2)
	for _, k := range []string{"key:3000", "key:3999"} {
		go func() { writes <- c.Set(context.Background(), k, "new", 0).Err() }()
	}
	s.Wait(t, "two blocked writers", func(v standin.View) bool { return v.Blocked == 2 })
	s.Step(1000)
	s.Advance(time.Second)
	s.WaitSampled(t, 2)
	s.Step(3000)
	for range 2 {
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
	}
	s.Advance(2 * time.Second)
	s.Finish()
	if err := <-ended; err != nil {
		t.Fatalf("vkwatch save: %v\n%s", err, stderr.String())
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, errOut := runVKWatch(t, time.Minute, "report", rec, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	res := openInChromium(t, page)
	row := res.rows("summary")[s.Addr]
	if row["blocked"].v != "2" || row["cow"].v != "0" {
		t.Errorf("summary: writers blocked %q, copy-on-write %q; want 2 and 0 (no child)", row["blocked"].v, row["cow"].v)
	}
	for _, want := range []string{"BGSAVE forkless, ok", "a forkless save forks no child", "held up to 2 writers"} {
		if !strings.Contains(res.story, want) {
			t.Errorf("the sentences do not say %q: %q", want, res.story)
		}
	}
	saves := res.list("saves")
	if len(saves) != 1 || saves[0]["blocked"].v != strconv.Itoa(2) {
		t.Errorf("table of saves: %v", saves)
	}
}

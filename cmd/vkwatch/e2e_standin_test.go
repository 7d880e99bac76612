//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
)

// The real binary against the Valkey 9.2 stand-in (source/server/standin):
// no 9.2 server can be built here. The test moves the stand-in's saves
// one step at a time and waits, for each, until vkwatch shows it.

// standInClient is a client of the test's own on the stand-in.
func standInClient(t *testing.T, s *standin.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// lastSaveBlock is the pane's last-save block: its three lines, from
// "last save".
func lastSaveBlock(f shot) string {
	lines := strings.Split(f.String(), "\n")
	for i, l := range lines {
		if strings.Contains(l, "last save ") && !strings.Contains(l, "none yet") && i+2 < len(lines) {
			return strings.Join(lines[i:i+3], "\n")
		}
	}
	return ""
}

// forkSaveOn runs a fork save on the stand-in through the session's b key,
// with writes during it, to the end, and returns the last-save block.
func forkSaveOn(t *testing.T, s *standin.Server, c *redis.Client, sess *session) string {
	t.Helper()
	ctx := context.Background()
	sess.press("b")
	sess.waitScreen(20*time.Second, "the fork save running", func(f shot) bool { return strings.Contains(f.String(), "▶ BGSAVE fork") })
	for i := range 50 {
		if err := c.Set(ctx, "key:"+strconv.Itoa(i), strings.Repeat("w", 600), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.Step(s.View().Keys)
	s.Advance(2 * time.Second)
	s.Finish()
	f := sess.waitScreen(20*time.Second, "the fork save's report", func(f shot) bool {
		b := lastSaveBlock(f)
		return strings.Contains(b, "last save BGSAVE fork by vkwatch · ok") && strings.Contains(b, "  cow ") && strings.Contains(b, "forecast cow")
	})
	s.Advance(time.Second) // the next save begins in a later second
	return lastSaveBlock(f)
}

// metricsBody reads vkwatch's /metrics.
func metricsBody(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b)
}

// TestStandInForklessSession: the story on screen, in --report,
// in /metrics, in the recording's replay and on the report's page. After
// a fork save, a forkless save shows none of the fork's copy-on-write
// (no child), its phases (starting, an ETA, writing the file), the
// writers it blocks; a cancelled and an aborted save are reported as such.
func TestStandInForklessSession(t *testing.T) {
	ctx := context.Background()
	s := standin.Start(t, standin.Options{ForklessInfra: true})
	s.Load("key:", 4000, 600)
	s.Load("small:", 10, 100)
	c := standInClient(t, s)
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "saves.json")
	maddr := "127.0.0.1:" + strconv.Itoa(servertest.FreePort(t))
	sess := startSessionSized(t, 60, 360, childEnv(), "--record", rec, "--report", rep, "--metrics", maddr, s.Addr)
	sess.waitScreen(20*time.Second, "the stand-in sampled", func(f shot) bool { return sampled(f.String()) })

	fork := forkSaveOn(t, s, c, sess)
	forkCOW := regexp.MustCompile(`cow (\S+ \S+) \(peak`).FindStringSubmatch(fork)
	if forkCOW == nil || forkCOW[1] != "200 KiB" {
		t.Fatalf("the fork save's copy-on-write (rdb_last_cow_size, 50 pages): %q", fork)
	}

	if err := c.ConfigSet(ctx, "bgsave-default-method", "forkless").Err(); err != nil {
		t.Fatal(err)
	}
	sess.waitScreen(20*time.Second, "the method forkless", func(f shot) bool {
		return strings.Contains(f.String(), "save method forkless") && strings.Contains(f.String(), "next save forkless (if no module forces a fork)")
	})
	sess.press("b")
	sess.waitScreen(20*time.Second, "the forkless save before its first key", func(f shot) bool {
		return strings.Contains(f.String(), "▶ BGSAVE forkless") && strings.Contains(f.String(), "starting: before the first key")
	})
	// Small values are cloned (the server's own memory rises), large
	// ones make their writers wait.
	for i := range 10 {
		if err := c.Set(ctx, "small:"+strconv.Itoa(i), strings.Repeat("r", 100), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	writes := make(chan error, 2)
	for _, k := range []string{"key:3000", "key:3999"} {
		w := standInClient(t, s)
		go func() { writes <- w.Set(ctx, k, "new", 0).Err() }()
	}
	s.Wait(t, "two writers blocked by the save thread", func(v standin.View) bool { return v.Blocked == 2 })
	s.Step(1000)
	s.Advance(time.Second)
	sess.waitScreen(20*time.Second, "the ETA and the blocked writers", func(f shot) bool {
		return strings.Contains(f.String(), "ETA 3.0s") && strings.Contains(f.String(), "blocked clients 2") &&
			strings.Contains(f.String(), "cow none (no child)")
	})
	s.Step(3010)
	for range 2 {
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
	}
	sess.waitScreen(20*time.Second, "the tail", func(f shot) bool { return strings.Contains(f.String(), "finishing: writing the file") })
	s.Advance(2 * time.Second)
	s.Finish()
	// The block's three lines as one frame drew them: a snapshot taken
	// while a frame is written may hold the old block's lower lines.
	f := sess.waitScreen(20*time.Second, "the forkless save's report", func(f shot) bool {
		b := lastSaveBlock(f)
		return strings.Contains(b, "last save BGSAVE forkless by vkwatch · ok") && strings.Contains(b, "  cow none") &&
			strings.Contains(b, "forecast cow 0 B forkless")
	})
	block := lastSaveBlock(f)
	for _, want := range []string{"took 3s server", "fork pause none (no fork)", "cow none (no child) · ", "peak used +1000 B", "blocked writers 2"} {
		if !strings.Contains(block, want) {
			t.Errorf("the forkless save's last-save block lacks %q:\n%s", want, block)
		}
	}
	if strings.Contains(block, forkCOW[1]) {
		t.Errorf("the forkless save shows the fork save's copy-on-write %s:\n%s", forkCOW[1], block)
	}
	m := metricsBody(t, maddr)
	cowLine := regexp.MustCompile(`(?m)^vkwatch_last_save_cow_bytes\{[^}]*kind="BGSAVE forkless"[^}]*\} (\S+)$`).FindStringSubmatch(m)
	if cowLine == nil || cowLine[1] != "0" {
		t.Errorf("/metrics: the forkless save's copy-on-write %v, want 0:\n%s", cowLine, m)
	}

	sess.press("r")
	sess.waitScreen(10*time.Second, "the reports table: the forkless save, its copy-on-write none and 2 writers blocked", func(f shot) bool {
		return tableSaves(f) == "ok/200 KiB/0 ok/none/2"
	})
	sess.press("r")

	cancelAndAbort(t, s, c, sess)
	sess.quit()

	checkReportJSON(t, rep)
	checkReplay(t, rec)
	checkPage(t, rec, dir)
}

// cancelAndAbort runs two more forkless saves: one cancelled with x x
// (the answer at once, the save stopping later), one aborted by FLUSHALL.
func cancelAndAbort(t *testing.T, s *standin.Server, c *redis.Client, sess *session) {
	t.Helper()
	s.Advance(time.Second)
	sess.press("b")
	sess.waitScreen(20*time.Second, "a forkless save", func(f shot) bool { return strings.Contains(f.String(), "▶ BGSAVE forkless") })
	sess.press("x")
	sess.press("x")
	sess.waitScreen(20*time.Second, "the save stopping after BGSAVE CANCEL's answer", func(f shot) bool {
		return strings.Contains(f.String(), "cancelling: BGSAVE CANCEL answered")
	})
	s.Advance(time.Second)
	s.SettleCancel()
	sess.waitScreen(20*time.Second, "the cancelled save", func(f shot) bool {
		return strings.Contains(lastSaveBlock(f), "last save BGSAVE forkless by vkwatch · cancelled") &&
			strings.Contains(f.String(), "ended cancelled: BGSAVE CANCEL answered")
	})

	s.Advance(time.Second)
	sess.press("b")
	sess.waitScreen(20*time.Second, "another forkless save", func(f shot) bool { return strings.Contains(f.String(), "▶ BGSAVE forkless") })
	s.Step(500)
	s.Advance(time.Second)
	s.WaitSampled(t, 1)
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	sess.waitScreen(20*time.Second, "the aborted save", func(f shot) bool {
		return strings.Contains(lastSaveBlock(f), "last save BGSAVE forkless by vkwatch · ✗ aborted") &&
			strings.Contains(f.String(), "ended aborted: rdb_last_save_time not advanced")
	})
}

// savedReport is the part of a --report entry the test checks.
type savedReport struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Evidence      string `json:"evidence"`
	COW           *int64 `json:"cow"`
	COWFrom       string `json:"cow_from"`
	BlockedDuring *int64 `json:"blocked_during"`
}

// checkReportJSON: --report holds the four saves, each with its own
// figures and the evidence of its status.
func checkReportJSON(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reps []savedReport
	if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 4 {
		t.Fatalf("--report: %v, %d reports:\n%s", err, len(reps), b)
	}
	want := []struct {
		kind, status, cowFrom string
		cow                   int64
	}{
		{"BGSAVE fork", "ok", "rdb_last_cow_size", 50 * 4096},
		{"BGSAVE forkless", "ok", string(source.FromNoChild), 0},
		{"BGSAVE forkless", "cancelled", string(source.FromNoChild), 0},
		{"BGSAVE forkless", "aborted", string(source.FromNoChild), 0},
	}
	for i, w := range want {
		r := reps[i]
		if r.Kind != w.kind || r.Status != w.status || r.COWFrom != w.cowFrom || r.COW == nil || *r.COW != w.cow || r.Evidence == "" {
			t.Errorf("--report %d: %+v (cow %v), want %+v", i, r, r.COW, w)
		}
	}
	if b := reps[1].BlockedDuring; b == nil || *b != 2 {
		t.Errorf("--report: the forkless save's blocked_clients during it %v, want 2", b)
	}
}

// checkReplay: the recording replayed shows the same saves, from the same
// samples and answers.
func checkReplay(t *testing.T, rec string) {
	t.Helper()
	p := startSessionSized(t, 60, 360, childEnv(), "replay", rec, "--speed", "16")
	p.waitScreen(60*time.Second, "the aborted save replayed", func(f shot) bool {
		return strings.Contains(lastSaveBlock(f), "last save BGSAVE forkless by vkwatch · ✗ aborted")
	})
	p.press("r")
	p.waitScreen(10*time.Second, "the replay's reports table with the same saves", func(f shot) bool {
		return tableSaves(f) == "ok/200 KiB/0 ok/none/2 cancelled/none/0 ✗ aborted/none/0"
	})
	p.quit()
}

// tableSaves is the reports table's saves as status/cow/blocked, in order.
func tableSaves(f shot) string {
	var out []string
	for _, row := range regexp.MustCompile(`│ BGSAVE (fork|forkless) .*`).FindAllString(f.String(), -1) {
		cells := strings.Split(row, "│")
		if len(cells) < 9 {
			return ""
		}
		out = append(out, strings.TrimSpace(cells[3])+"/"+strings.TrimSpace(cells[7])+"/"+strings.TrimSpace(cells[len(cells)-2]))
	}
	return strings.Join(out, " ")
}

// checkPage: vkwatch report's page of the recording shows each save's
// status and, for a forkless one, no copy-on-write.
func checkPage(t *testing.T, rec, dir string) {
	t.Helper()
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := runVKWatch(t, time.Minute, "report", rec, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?s)<tr data-save="\d+">.*?</tr>`).FindAllString(string(b), -1)
	if len(rows) != 4 {
		t.Fatalf("the page shows %d saves, want 4", len(rows))
	}
	for i, want := range []string{">ok<", ">ok<", ">cancelled<", ">aborted<"} {
		if !strings.Contains(rows[i], want) {
			t.Errorf("save %d on the page lacks %s:\n%s", i+1, want, rows[i])
		}
		forkless := strings.Contains(rows[i], "BGSAVE forkless")
		if cow := strings.Contains(rows[i], `data-col="cow" data-v="0">none (no child)<`); cow != forkless {
			t.Errorf("save %d on the page: forkless %v, copy-on-write none %v:\n%s", i+1, forkless, cow, rows[i])
		}
	}
}

// driveSaves moves each save the stand-in runs (bench's BGSAVEs) on: a
// quarter of its keys for every two samples vkwatch takes, then its file
// written. It ends when ctx does.
func driveSaves(ctx context.Context, s *standin.Server) error {
	for {
		v, err := s.Await(ctx, func(v standin.View) bool { return v.Saving })
		if err != nil {
			return nil
		}
		for s.View().Written < v.Keys {
			from := s.View().Samples
			if _, err := s.Await(ctx, func(w standin.View) bool { return w.Samples >= from+2 }); err != nil {
				return err
			}
			s.Step(v.Keys / 4)
			s.Advance(time.Second)
		}
		from := s.View().Samples
		if _, err := s.Await(ctx, func(w standin.View) bool { return w.Samples >= from+2 }); err != nil {
			return err
		}
		s.Advance(time.Second)
		s.Finish()
	}
}

// TestStandInBench: bench on a fork server and a forkless one (stand-ins)
// gives the seed's columns for both: the forkless run's copy-on-write is
// none (not the fork save's the server ran before it), its writers
// blocked; bench --json and the report's page say the same.
func TestStandInBench(t *testing.T) {
	const keys = 2000
	fork := standin.Start(t, standin.Options{})
	forkless := standin.Start(t, standin.Options{ForklessInfra: true})
	for _, s := range []*standin.Server{fork, forkless} {
		s.Load(load.DefaultPrefix, keys, 600)
	}
	// A fork save on the forkless server first: rdb_last_cow_size holds
	// its copy-on-write, which the forkless run must not show.
	c := standInClient(t, forkless)
	ctx := context.Background()
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		c.Set(ctx, load.DefaultPrefix+strconv.Itoa(i), strings.Repeat("x", 600), 0)
	}
	forkless.Step(keys)
	forkless.Advance(time.Second)
	forkless.Finish()
	if err := c.ConfigSet(ctx, "bgsave-default-method", "forkless").Err(); err != nil {
		t.Fatal(err)
	}
	forkless.Advance(time.Second)

	dctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	for _, s := range []*standin.Server{fork, forkless} {
		go func() { done <- driveSaves(dctx, s) }()
	}
	code, stdout, stderr := runVKWatch(t, 3*time.Minute, "bench", fork.Addr, forkless.Addr, "--keys", strconv.Itoa(keys), "--value-size", "600",
		"--runs", "1", "--window", "3s", "--trigger-at", "1s", "--writers", "2", "--interval", "100ms", "--json")
	stop()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("driving the stand-ins: %v", err)
		}
	}
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, stderr)
	}
	var out struct {
		Servers []struct {
			Runs []struct {
				Kind      string `json:"kind"`
				Status    string `json:"status"`
				COW       *int64 `json:"cow_bytes"`
				COWFrom   string `json:"cow_from"`
				ServerCOW *int64 `json:"server_cow_bytes"`
				Blocked   *int64 `json:"blocked_writers"`
				MemDelta  *int64 `json:"mem_delta_bytes"`
			} `json:"runs"`
			COW     *struct{ Mean float64 } `json:"cow_bytes"`
			Blocked *struct{ Mean float64 } `json:"blocked_writers"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Servers) != 2 {
		t.Fatalf("bench --json: %v\n%s", err, stdout)
	}
	f, fl := out.Servers[0], out.Servers[1]
	fr, flr := f.Runs[0], fl.Runs[0]
	if fr.Kind != "BGSAVE fork" || fr.Status != "ok" || fr.COW == nil || *fr.COW <= 0 || fr.ServerCOW == nil || *fr.ServerCOW != *fr.COW ||
		fr.Blocked == nil || *fr.Blocked != 0 {
		t.Errorf("fork run: %+v", fr)
	}
	if flr.Kind != "BGSAVE forkless" || flr.Status != "ok" || flr.COW == nil || *flr.COW != 0 || flr.COWFrom != string(source.FromNoChild) ||
		flr.ServerCOW == nil || *flr.ServerCOW != 0 || flr.Blocked == nil || *flr.Blocked < 1 || flr.MemDelta == nil {
		t.Errorf("forkless run: %+v (server COW %v, blocked %v)", flr, flr.ServerCOW, flr.Blocked)
	}
	if fl.COW == nil || fl.COW.Mean != 0 || fl.Blocked == nil || fl.Blocked.Mean < 1 {
		t.Errorf("forkless summary: cow %+v, blocked %+v", fl.COW, fl.Blocked)
	}

	// The report's page of the bench: the seeds' table, for both.
	dir := t.TempDir()
	bj, page := filepath.Join(dir, "bench.json"), filepath.Join(dir, "report.html")
	if err := os.WriteFile(bj, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runVKWatch(t, time.Minute, "report", bj, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(page)
	row := regexp.MustCompile(`(?s)<tr data-server="` + regexp.QuoteMeta(forkless.Addr) + `">.*?</tr>`).FindString(string(b))
	if !strings.Contains(row, `data-col="0-mean" data-v="0"`) || !strings.Contains(row, fmt.Sprintf(`data-col="7-mean" data-v="%v"`, fl.Blocked.Mean)) {
		t.Errorf("the page's forkless row: copy-on-write 0 and the blocked writers wanted:\n%s", row)
	}
	for _, s := range []*standin.Server{fork, forkless} {
		if u := s.Unknown(); len(u) > 0 {
			t.Errorf("vkwatch sent the stand-in commands it does not know: %q", u)
		}
	}
}

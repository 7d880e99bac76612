//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// The two panes of a two-server session, side by side.
func leftPane(f shot) string  { return f.region(0, termCols/2) }
func rightPane(f shot) string { return f.region(termCols/2, termCols) }

// connLine matches a pane's connection line when it says connected.
var connLine = regexp.MustCompile(`[│║] connected · `)

func connected(pane string) bool { return connLine.MatchString(pane) }
func down(pane string) bool      { return strings.Contains(pane, "✗ disconnected: ") }

// sampled says the pane has PING figures: samples arrive.
func sampled(pane string) bool { return strings.Contains(pane, "ping 10s p50 ") }

// pingMax reads the 10 s PING maximum a pane shows.
var pingMaxRE = regexp.MustCompile(`ping 10s p50 \S+\s+p99 \S+\s+max (\S+)`)

func pingMax(pane string) (time.Duration, bool) {
	m := pingMaxRE.FindStringSubmatch(pane)
	if m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	return d, err == nil
}

// charted says a pane draws a chart: braille dots (lines) or blocks (bars).
func charted(pane string) bool {
	return strings.ContainsFunc(pane, func(r rune) bool {
		return (r > 0x2800 && r <= 0x28FF) || strings.ContainsRune("▁▂▃▄▅▆▇█", r)
	})
}

// gapMarked says the marker row after its legend shows a gap.
func gapMarked(pane string) bool {
	for _, l := range strings.Split(pane, "\n") {
		if _, after, ok := strings.Cut(l, "×gap"); ok && strings.Contains(after, "×") {
			return true
		}
	}
	return false
}

// forks is the server's total_forks: every BGSAVE and BGREWRITEAOF forks.
func forks(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	return servertest.InfoInt(t, c, "stats", "total_forks")
}

// TestSessionKillRestart: a server killed while watched shows as
// disconnected in its pane, which keeps its history, while the other pane
// goes on; restarted on the same port, it is watched again, and the
// outage stays marked as a gap.
func TestSessionKillRestart(t *testing.T) {
	a := servertest.StartDefault(t)
	b := servertest.StartDefault(t)
	s := startSession(t, childEnv(), a.Addr, b.Addr)
	s.waitScreen(15*time.Second, "both panes connected and sampling", func(f shot) bool {
		l, r := leftPane(f), rightPane(f)
		return connected(l) && connected(r) && sampled(l) && sampled(r) &&
			strings.Contains(l, a.Addr) && strings.Contains(r, b.Addr)
	})

	killed := time.Now()
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	f := s.waitScreen(10*time.Second, "the killed server's pane saying disconnected", func(f shot) bool {
		return down(leftPane(f))
	})
	took := time.Since(killed)
	t.Logf("disconnected shown %s after SIGKILL", took.Round(time.Millisecond))
	// The issue asks for 1 s; the margin is for a loaded 2-core machine
	// running this binary under the race detector.
	if took > 2*time.Second {
		t.Errorf("disconnected shown %s after SIGKILL, want within 1 s", took)
	}
	l := leftPane(f)
	if !strings.Contains(l, "redis 7.") || !regexp.MustCompile(`used +[0-9]`).MatchString(l) || !charted(l) {
		t.Errorf("the killed server's pane lost its history:\n%s", l)
	}
	// The other pane goes on: it still changes, and still says connected.
	before := rightPane(f)
	s.waitScreen(10*time.Second, "the other pane updating while one server is down", func(g shot) bool {
		r := rightPane(g)
		return connected(r) && r != before && down(leftPane(g))
	})
	s.waitScreen(10*time.Second, "the outage marked as a gap", func(g shot) bool { return gapMarked(leftPane(g)) })

	if err := a.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	s.waitScreen(10*time.Second, "the restarted server watched again", func(g shot) bool {
		l := leftPane(g)
		return connected(l) && !down(l)
	})
	took = time.Since(back)
	t.Logf("connected again %s after the restart", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("connected again %s after the restart, want within 2 s", took)
	}
	s.waitScreen(10*time.Second, "samples again, with the gap still marked", func(g shot) bool {
		l := leftPane(g)
		return sampled(l) && gapMarked(l) && connected(rightPane(g))
	})
	s.quit()
}

// TestSessionFrozenServer: while a server is stopped (SIGSTOP) the UI
// still answers keys, a BGSAVE sent to it does not block anything, and
// its answer shows when the server wakes up; the stall shows at its full
// length in the PING figures.
func TestSessionFrozenServer(t *testing.T) {
	a := servertest.StartDefault(t)
	b := servertest.StartDefault(t)
	s := startSession(t, childEnv(), a.Addr, b.Addr)
	s.waitScreen(15*time.Second, "both panes connected and sampling", func(f shot) bool {
		return sampled(leftPane(f)) && sampled(rightPane(f))
	})

	if err := a.Freeze(); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	t.Cleanup(func() { a.Thaw() })
	f := s.waitScreen(10*time.Second, "the frozen server's pane saying it does not answer", func(f shot) bool {
		return strings.Contains(leftPane(f), "not answering for ")
	})

	// Keys are answered at once while the server is frozen.
	fullHelp := func(f shot) bool { return strings.Contains(f.String(), "shift+tab") }
	if fullHelp(f) {
		t.Fatal("full help shown before ? was pressed")
	}
	pressed := time.Now()
	s.press("?")
	s.waitScreen(5*time.Second, "the full help after ?", fullHelp)
	t.Logf("? answered in %s with a server frozen", time.Since(pressed).Round(time.Millisecond))

	// b goes to the focused (left, frozen) server: sent, not waited for.
	s.press("b")
	s.waitScreen(5*time.Second, "the note that BGSAVE is being sent", func(f shot) bool {
		return strings.Contains(f.String(), "sending BGSAVE to "+a.Addr)
	})
	pressed = time.Now()
	s.press("?")
	s.waitScreen(5*time.Second, "the short help again, with BGSAVE outstanding", func(f shot) bool { return !fullHelp(f) })
	t.Logf("? answered in %s with a BGSAVE outstanding to the frozen server", time.Since(pressed).Round(time.Millisecond))
	g := s.scr.snapshot()
	s.waitScreen(10*time.Second, "the other pane updating", func(f shot) bool {
		return rightPane(f) != rightPane(g) && connected(rightPane(f))
	})

	if err := a.Thaw(); err != nil {
		t.Fatal(err)
	}
	stall := time.Since(frozen)
	t.Logf("server frozen for %s", stall.Round(time.Millisecond))
	// The answer stays in the footer only while the save runs (an empty
	// server's takes milliseconds): its report in the pane says as much.
	s.waitScreen(15*time.Second, "BGSAVE's answer or its save's report after the server woke up", func(f shot) bool {
		return strings.Contains(f.String(), "BGSAVE on "+a.Addr+": Background saving started") ||
			strings.Contains(leftPane(f), "last save BGSAVE fork by vkwatch") || strings.Contains(leftPane(f), "last BGSAVE fork")
	})
	f = s.waitScreen(10*time.Second, "the frozen server connected again with the stall in its PING figures", func(f shot) bool {
		l := leftPane(f)
		max, ok := pingMax(l)
		return connected(l) && ok && max > time.Second
	})
	// The PING sent just after the freeze waited for all of it, less a
	// probe interval and the time SIGSTOP took to land.
	if max, _ := pingMax(leftPane(f)); max < stall*9/10 {
		t.Errorf("PING max %s for a %s stall", max, stall)
	}
	s.quit()
}

// TestSessionACLNoPerm: watching with an ACL user that may not BGSAVE, b
// shows the server's NOPERM in the footer and the monitor goes on. The
// session ends with SIGTERM, which quits like q.
func TestSessionACLNoPerm(t *testing.T) {
	srv, admin := servertest.StartWithClient(t)
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "watcher", "reset", "on", ">w-pass-1234",
		"-@all", "+info", "+ping", "+config|get").Err(); err != nil {
		t.Fatal(err)
	}
	forksBefore := forks(t, admin)
	s := startSession(t, childEnv("VALKEYCLI_AUTH=w-pass-1234"), "--user", "watcher", srv.Addr)
	s.waitScreen(15*time.Second, "connected and sampling as the ACL user", func(f shot) bool {
		p := f.String()
		return connected(p) && sampled(p) && strings.Contains(p, "watcher@"+srv.Addr)
	})
	s.press("b")
	f := s.waitScreen(10*time.Second, "NOPERM in the footer", func(f shot) bool {
		return strings.Contains(f.String(), "BGSAVE on watcher@"+srv.Addr+": NOPERM")
	})
	s.waitScreen(10*time.Second, "the monitor going on after the refusal", func(g shot) bool {
		p := g.String()
		return connected(p) && !down(p) && p != f.String() && strings.Contains(p, "NOPERM")
	})
	if n := forks(t, admin); n != forksBefore {
		t.Errorf("total_forks %d -> %d: something forked", forksBefore, n)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(10 * time.Second); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0; stderr %q", code, s.stderr.String())
	}
	s.checkRestored()
	if s.stderr.String() != "" {
		t.Errorf("stderr %q, want nothing", s.stderr.String())
	}
}

// newSecret returns a password that cannot show up by chance.
func newSecret(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "pw-" + hex.EncodeToString(b)
}

// TestSessionSecretFromEnv: a password given in VALKEYCLI_AUTH is used and
// shows nowhere: not in argv (/proc/PID/cmdline), the screen, stderr, the
// recording or the report.
func TestSessionSecretFromEnv(t *testing.T) {
	pw := newSecret(t)
	srv := servertest.Start(t, server.Options{Password: pw})
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "report.json")
	s := startSession(t, childEnv("VALKEYCLI_AUTH="+pw), "--record", rec, "--report", rep, srv.Addr)
	s.waitScreen(15*time.Second, "connected and sampling", func(f shot) bool {
		p := f.String()
		return connected(p) && sampled(p)
	})
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.pid()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cmdline), "--record") || strings.Contains(string(cmdline), pw) {
		t.Errorf("argv %q: want the flags and not the password", cmdline)
	}
	// A save, so that the report has something in it.
	s.press("b")
	s.waitScreen(15*time.Second, "the save's report in the pane", func(f shot) bool {
		return strings.Contains(f.String(), "last save BGSAVE")
	})
	s.quit()

	recording, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var reports []map[string]any
	if err := json.Unmarshal(report, &reports); err != nil || len(reports) != 1 {
		t.Errorf("report: %d reports, %v; want the one save", len(reports), err)
	}
	if !strings.Contains(string(recording), srv.Addr) || !strings.Contains(string(recording), "save_ended") {
		t.Errorf("the recording lacks the server or the save (%d bytes)", len(recording))
	}
	for name, text := range map[string]string{
		"screen": s.raw.String(), "stderr": s.stderr.String(), "recording": string(recording), "report": string(report),
	} {
		if strings.Contains(text, pw) {
			t.Errorf("the password shows in the %s", name)
		}
	}
}

// TestSessionAskpassReadOnly: --askpass reads the password from the
// terminal without echo, and --read-only refuses every key that would
// change the server, saying so.
func TestSessionAskpassReadOnly(t *testing.T) {
	pw := newSecret(t)
	srv := servertest.Start(t, server.Options{Password: pw})
	admin := servertest.Client(t, srv)
	forksBefore := forks(t, admin)
	s := startSession(t, childEnv("VALKEYCLI_USER=default"), "--askpass", "--read-only", srv.Addr)
	s.waitStderr(10*time.Second, "Password for default@"+srv.Addr+": ")
	s.press(pw + "\r")
	s.waitScreen(15*time.Second, "connected and sampling", func(f shot) bool {
		p := f.String()
		return connected(p) && sampled(p)
	})
	for _, k := range []struct{ key, cmd string }{{"b", "BGSAVE"}, {"a", "BGREWRITEAOF"}, {"B", "BGSAVE"}, {"A", "BGREWRITEAOF"}} {
		s.press(k.key)
		s.waitScreen(5*time.Second, k.key+" refused as read-only", func(f shot) bool {
			for _, l := range strings.Split(f.String(), "\n") {
				if strings.Contains(l, "read-only") && strings.Contains(l, k.cmd) && !strings.Contains(l, "sending") {
					return true
				}
			}
			return false
		})
		// Clear the footer, so that the next refusal is a new one: pause
		// and resume. One key at a time: bubbletea reads runes that
		// arrive together as one key.
		s.press("p")
		s.waitScreen(5*time.Second, "paused", func(f shot) bool { return strings.Contains(f.String(), "PAUSED") })
		s.press("p")
		s.waitScreen(5*time.Second, "resumed, the footer empty", func(f shot) bool {
			return !strings.Contains(f.String(), "PAUSED") && !strings.Contains(f.String(), "read-only:")
		})
	}
	s.quit()
	if n := forks(t, admin); n != forksBefore {
		t.Errorf("total_forks %d -> %d with --read-only", forksBefore, n)
	}
	if strings.Contains(s.raw.String()+s.stderr.String(), pw) {
		t.Error("the password typed at --askpass was echoed")
	}
}

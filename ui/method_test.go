package ui

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// methodRun is one server watched as the monitor watches it, with a
// model whose Send goes through the watcher's Do, as the monitor's does.
type methodRun struct {
	w    *watchedRun
	m    Model
	sent []string
	mu   sync.Mutex
	fed  int // w.run.events folded into m so far
}

func newMethodRun(t *testing.T, ctx context.Context, name, addr string, w, h int) *methodRun {
	t.Helper()
	r := &methodRun{w: watchRun(t, ctx, name, addr)}
	r.w.sampled(t, 2)
	send := func(node source.NodeID, args ...string) {
		r.mu.Lock()
		r.sent = append(r.sent, strings.Join(args, " "))
		r.mu.Unlock()
		r.w.fleet.Do(ctx, node, args...)
	}
	r.m = setup(t, Config{Nodes: r.w.run.nodes, Send: send}, w, h, nil)
	r.feed(t)
	return r
}

// feed folds the events the run has taken since the last feed.
func (r *methodRun) feed(t *testing.T) {
	t.Helper()
	r.m = feed(t, r.m, r.w.run.events[r.fed:])
	r.fed = len(r.w.run.events)
}

func (r *methodRun) sentSoFar() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// press presses k and runs the command it returns, as bubbletea would.
func (r *methodRun) press(t *testing.T, k string) int {
	t.Helper()
	m, cmd := press(r.m, k)
	r.m = m
	return run(t, cmd)
}

// TestMethodKeySwitchesStandIn: on the Valkey 9.2 stand-in started with
// forkless-infrastructure-enabled yes (no 9.2 server can be built here),
// M asks first and sends nothing; M again sends CONFIG SET
// bgsave-default-method through the watcher's Do, the footer says the
// server's answer and that it is kept on quit, and the next sample shows
// the method switched. M twice more switches it back. The next-save block
// shows both methods side by side throughout: the forkless side says
// none was seen yet.
func TestMethodKeySwitchesStandIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := standin.Start(t, standin.Options{ForklessInfra: true})
	srv.Load("key:", 1000, 100)
	r := newMethodRun(t, ctx, "method", srv.Addr, 200, 50)
	addr := r.w.run.nodes[0].Addr
	id := r.w.run.nodes[0].ID
	wantBothWays(t, "before", plainView(r.m))
	for _, sw := range []struct{ from, to string }{{"fork", "forkless"}, {"forkless", "fork"}} {
		if n := r.press(t, "M"); n != 0 || len(r.sentSoFar()) != 0 && sw.from == "fork" {
			t.Fatalf("first M sent %v", r.sentSoFar())
		}
		ask := lineWith(t, r.m, "press M again")
		if !strings.Contains(ask, "switch "+addr+" to "+sw.to+" saves (kept on quit)? press M again") {
			t.Errorf("question %q", ask)
		}
		lineWith(t, r.m, "M again: switch to "+sw.to+" • any other key: keep "+sw.from)
		if got := srv.Setting("bgsave-default-method"); got != sw.from {
			t.Fatalf("the stand-in's method is %q after one M", got)
		}
		if n := r.press(t, "M"); n != 1 {
			t.Fatalf("second M ran %d commands", n)
		}
		if got := srv.Setting("bgsave-default-method"); got != sw.to {
			t.Fatalf("the stand-in's method is %q after M twice, want %q", got, sw.to)
		}
		r.w.until(t, "the answer and a sample with the method switched", func(ev source.Event) bool {
			return ev.Kind == source.EventSample && ev.Node == id && ev.Sample.Config.Method == sw.to
		})
		r.feed(t)
		v := plainView(r.m)
		want := "CONFIG SET bgsave-default-method " + sw.to + " on " + addr + ": OK: its next BGSAVE saves " + sw.to
		if !strings.Contains(v, want) || !strings.Contains(v, "kept after vkwatch quits") {
			t.Errorf("footer does not say the answer %q:\n%s", want, v)
		}
		state := map[string]string{"fork": "saves by fork (forkless ready)", "forkless": "saves forkless"}[sw.to]
		if !strings.Contains(v, state) {
			t.Errorf("state line does not say %q:\n%s", state, v)
		}
		wantBothWays(t, "after "+sw.to, v)
	}
	if got := r.sentSoFar(); strings.Join(got, ",") != "CONFIG SET bgsave-default-method forkless,CONFIG SET bgsave-default-method fork" {
		t.Errorf("sent %q", got)
	}
}

// forkSide is the next-save block's fork side: its copy-on-write and
// how long it will last.
var forkSide = regexp.MustCompile(`(^|\s)fork +~[0-9.]+ [KMG]?i?B cow .*· [0-9.]+m?s`)

// wantBothWays fails unless the frame v shows the next save's two
// methods side by side, the forkless one before any forkless save.
func wantBothWays(t *testing.T, what, v string) {
	t.Helper()
	if !forkSide.MatchString(v) {
		t.Errorf("%s: no fork side:\n%s", what, v)
	}
	wantFields(t, what, v, "forkless", forecast.NoForklessYet)
}

// TestMethodKeyOtherKeyKeeps: any other key after M sends nothing.
func TestMethodKeyOtherKeyKeeps(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: log.send}, 120, 40, valkeyScenario(1, 10*time.Second))
	m, _ = press(m, "M")
	lineWith(t, m, "press M again")
	m, cmd := press(m, "z")
	run(t, cmd)
	if len(log.got()) != 0 || strings.Contains(plainView(m), "press M again") {
		t.Fatalf("z after M: sent %v", log.got())
	}
	m, cmd = press(m, "M")
	run(t, cmd)
	m, cmd = press(m, "M")
	if run(t, cmd); strings.Join(log.got(), ",") != "0 CONFIG SET bgsave-default-method fork" {
		t.Fatalf("M twice sent %v", log.got())
	}
}

// TestMethodKeyReadOnly: read-only, M sends nothing and says why, and
// the help does not offer it.
func TestMethodKeyReadOnly(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: log.send, ReadOnly: true}, 200, 50, valkeyScenario(1, 10*time.Second))
	for range 2 {
		var cmd tea.Cmd
		m, cmd = press(m, "M")
		run(t, cmd)
	}
	if len(log.got()) != 0 {
		t.Fatalf("read-only sent %v", log.got())
	}
	lineWith(t, m, "read-only: the save method of "+uitest.AddrA+" is not switched (--read-only)")
	m, _ = press(m, "?")
	if v := plainView(m); strings.Contains(v, "fork⇄forkless") {
		t.Errorf("read-only help offers M:\n%s", v)
	}
}

// TestMethodKeyRefused: where a server cannot save both ways M sends
// nothing, the footer says why, and the help does not offer it: a real
// Redis 7.0.15 (no bgsave-default-method), and the 9.2 stand-in started
// without forkless-infrastructure-enabled (only a restart changes it).
// Neither shows the two-method forecast. The help offers M on a server
// that can.
func TestMethodKeyRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	redisSrv := servertest.Start(t, server.Options{})
	noInfra := standin.Start(t, standin.Options{})
	for _, c := range []struct{ name, addr, why string }{
		{"redis", redisSrv.Addr, " saves by fork only: no bgsave-default-method (Valkey 9.2 or later has it) (this is redis 7.0.15)"},
		{"stand-in without forkless infrastructure", noInfra.Addr, " cannot save forkless: forkless-infrastructure-enabled is not yes, and only a restart with it yes changes that"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newMethodRun(t, ctx, c.name, c.addr, 200, 50)
			for range 2 {
				if n := r.press(t, "M"); n != 0 {
					t.Fatalf("M ran %d commands", n)
				}
			}
			if got := r.sentSoFar(); len(got) != 0 {
				t.Fatalf("sent %v", got)
			}
			lineWith(t, r.m, r.w.run.nodes[0].Addr+c.why)
			if v := plainView(r.m); strings.Contains(v, "forkless  ") || strings.Contains(v, forecast.NoForklessYet) {
				t.Errorf("a two-method forecast on a server that saves one way:\n%s", v)
			}
			r.press(t, "?")
			if v := plainView(r.m); strings.Contains(v, "fork⇄forkless") {
				t.Errorf("help offers M:\n%s", v)
			}
		})
	}
	// Its counterpart: the help offers M where it works.
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: (&sendLog{}).send}, 200, 50, valkeyScenario(1, 10*time.Second))
	m, _ = press(m, "?")
	lineWith(t, m, "M fork⇄forkless (kept on quit)")
}

//go:build linux

package main

// Nothing a watched server, a peer or a recording says drives the
// operator's terminal (issue 16): the real binary, in a pseudo-terminal,
// against a real replica announcing an escape sequence as its address, a
// hostile RESP peer, and a hostile recording. Each test checks that the
// injected sequences never reached the output, that no window title was
// set, and that the text did reach the screen, made visible.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// shownTitle is how oscTitle looks once inert: written out, on screen.
const shownTitle = `\x1b]0;PWNED\x07`

// checkSession checks a finished session: no injected sequence in what it
// wrote to the terminal or to stderr, and no window title set.
func checkSession(t *testing.T, s *session) {
	t.Helper()
	checkInertOutput(t, "the terminal output", s.raw.String())
	checkInertOutput(t, "stderr", s.stderr.String())
	if title := s.scr.windowTitle(); title != "" {
		t.Errorf("the window title was set to %q", title)
	}
}

func TestInertVTSeesTitles(t *testing.T) {
	// The title check above can fail: the virtual terminal does see one.
	scr := newScreen(5, 20)
	scr.Write([]byte("a" + oscTitle + "b"))
	if got := scr.windowTitle(); got != "PWNED" {
		t.Fatalf("title %q after OSC 0, want PWNED", got)
	}
}

// TestInertReplicaAnnounceIP is the report: a real replica whose
// replica-announce-ip holds an OSC title and a CSI colour syncs from the
// primary vkwatch watches. The save its sync starts is labelled with that
// address: escaped, on screen, and nothing else.
func TestInertReplicaAnnounceIP(t *testing.T) {
	primary := servertest.Start(t, server.Options{Args: []string{
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--rdb-key-save-delay", "1000"}})
	pc := servertest.Client(t, primary)
	ctx := context.Background()
	if err := pc.Do(ctx, "DEBUG", "POPULATE", "4000").Err(); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, childEnv(), primary.Addr)
	s.waitScreen(15*time.Second, "the primary sampled", func(f shot) bool { return sampled(f.String()) })

	_, rc := servertest.StartWithClient(t)
	const announce = oscTitle + csiColour + "red"
	if err := rc.ConfigSet(ctx, "replica-announce-ip", announce).Err(); err != nil {
		t.Fatalf("CONFIG SET replica-announce-ip: %v", err)
	}
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", primary.Port).Err(); err != nil {
		t.Fatal(err)
	}
	f := s.waitScreen(30*time.Second, "the replica's sync labelled with its escaped address", func(f shot) bool {
		return strings.Contains(f.String(), "replica "+shownTitle)
	})
	if !strings.Contains(f.String(), `\x1b[31;7;5mred`) {
		t.Errorf("the CSI is not shown escaped:\n%s", f)
	}
	s.quit()
	checkSession(t, s)
}

// TestInertHostilePeerMonitor: the monitor of a hostile peer, and the
// footer after b (its refusal is hostile too).
func TestInertHostilePeerMonitor(t *testing.T) {
	p := startHostilePeer(t, false, false)
	s := startSession(t, childEnv(), p.Addr)
	s.waitScreen(15*time.Second, "the peer's version, escaped", func(f shot) bool {
		return sampled(f.String()) && strings.Contains(f.String(), "7.0.15"+shownTitle)
	})
	s.press("b")
	if p.count("BGSAVE") == 0 {
		// A memory warning may hold the fork back: b again sends it.
		s.waitScreen(5*time.Second, "BGSAVE sent or held", func(f shot) bool {
			return p.count("BGSAVE") > 0 || strings.Contains(f.String(), "again")
		})
		if p.count("BGSAVE") == 0 {
			s.press("b")
		}
	}
	s.waitScreen(10*time.Second, "the refusal in the footer, escaped", func(f shot) bool {
		return strings.Contains(f.String(), "ERR refused "+shownTitle)
	})
	s.press("r") // the reports table, with whatever it shows
	s.press("r")
	s.quit()
	checkSession(t, s)
}

// TestInertHostilePeerCluster: the fleet view of a hostile one-node
// cluster (hostile node id and hostname in CLUSTER SHARDS), and its node
// opened.
func TestInertHostilePeerCluster(t *testing.T) {
	p := startHostilePeer(t, true, false)
	s := startSession(t, childEnv(), "--cluster", p.Addr)
	s.waitScreen(15*time.Second, "the fleet view", func(f shot) bool {
		return strings.Contains(f.String(), "CLUSTER SHARDS") && strings.Contains(f.String(), "primary")
	})
	s.press("\r")
	s.waitScreen(15*time.Second, "the node's pane, its version escaped", func(f shot) bool {
		return strings.Contains(f.String(), "7.0.15"+shownTitle)
	})
	s.quit()
	checkSession(t, s)
}

// TestInertHostilePeerExitMessage: a refused AUTH carries a hostile
// error, printed at exit.
func TestInertHostilePeerExitMessage(t *testing.T) {
	p := startHostilePeer(t, false, false)
	s := startSession(t, childEnv("VALKEYCLI_AUTH=not-the-password"), p.Addr)
	if code := s.wait(20 * time.Second); code != exitConnect {
		t.Errorf("exit status %d, want %d; stderr %q", code, exitConnect, s.stderr.String())
	}
	if !strings.Contains(s.stderr.String(), "WRONGPASS "+shownTitle) {
		t.Errorf("stderr does not show the refusal, escaped: %q", s.stderr.String())
	}
	checkSession(t, s)
}

// noControls fails when out holds any escape, BEL or C1 control at all:
// bench writes no styling.
func noControls(t *testing.T, what string, out []byte) {
	t.Helper()
	for _, c := range [][]byte{{0x1b}, {0x07}, []byte("\u009b"), []byte("\u009d")} {
		if i := bytes.Index(out, c); i >= 0 {
			t.Errorf("%s holds %q at byte %d: ...%q...", what, c, i, out[max(i-60, 0):min(i+60, len(out))])
		}
	}
}

// TestInertHostilePeerBench: bench against a hostile peer (its BGSAVE
// succeeds, its status is hostile): the table, the JSON and the progress
// hold the peer's text, escaped.
func TestInertHostilePeerBench(t *testing.T) {
	p := startHostilePeer(t, false, true)
	for _, json := range []bool{false, true} {
		args := []string{"bench", p.Addr, "--runs", "1", "--window", "3s", "--trigger-at", "500ms", "--writers", "1", "--keys", "1000"}
		if json {
			args = append(args, "--json")
		}
		cmd := exec.Command(vkwatchBin, args...)
		cmd.Env = childEnv()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("bench %v: %v\nstdout %s\nstderr %s", args, err, stdout.String(), stderr.String())
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("bench still running after 60s\nstderr %s", stderr.String())
		}
		noControls(t, "bench's stdout", stdout.Bytes())
		noControls(t, "bench's stderr", stderr.Bytes())
		want := shownTitle
		if json {
			want = `\u001b]0;PWNED\u0007` // JSON's own escape: the exact text
		}
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("bench's output does not show the peer's status as %s:\n%s", want, stdout.String())
		}
		if !strings.Contains(stderr.String(), "Background "+shownTitle) {
			t.Errorf("bench's progress does not show the peer's reply, escaped:\n%s", stderr.String())
		}
	}
}

// TestInertHostileRecording: a recording whose header (address, settings,
// identity) and events (samples, commands, errors, a save) hold the
// sequences, replayed.
func TestInertHostileRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostile.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.Now().Add(-time.Minute)
	addr := "127.0.0.1:7000" + hostile
	w, err := record.NewWriter(f, record.Header{
		VKWatch: "test" + hostile, Epoch: epoch, Settings: map[string]string{"interval": "200ms", "note": hostile},
		Servers: []record.ServerInfo{{Node: source.NodeID(addr), Addr: addr,
			Identity: &source.Identity{Addr: addr, Version: "7.0.15" + hostile, Role: "master" + hostile}}},
	}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	node := source.NodeID(addr)
	for i := 0; i < 20; i++ {
		off := time.Duration(i) * 200 * time.Millisecond
		s := &source.Sample{Seq: uint64(i + 1), Offset: off, At: epoch.Add(off),
			Info:   source.Info{Version: "7.0.15" + hostile, Role: "master" + hostile, UsedMemory: source.Some[int64](1 << 20)},
			Config: source.SaveConfig{Method: "fork" + hostile, Err: "NOPERM " + hostile}}
		if i >= 5 && i < 15 {
			s.Save = &source.SaveProgress{Kind: source.SaveFork, Started: time.Second, Elapsed: off - time.Second,
				Trigger: source.Trigger{Kind: source.TriggerReplica, Detail: "replica " + hostile + ":6380, diskless"}}
		}
		w.Write(source.Event{Node: node, Kind: source.EventSample, Offset: off, At: epoch.Add(off), Sample: s})
	}
	w.Write(source.Event{Node: node, Kind: source.EventCommand, Offset: 2 * time.Second,
		Command: &source.CommandResult{Command: "BGSAVE", Err: "ERR " + hostile}})
	w.Write(source.Event{Node: node, Kind: source.EventSaveEnded, Offset: 3 * time.Second, Report: &source.SaveReport{
		Node: node, Addr: addr, Kind: source.SaveFork, Status: "ok" + hostile,
		Trigger: source.Trigger{Kind: source.TriggerReplica, Detail: "replica " + hostile + ":6380, diskless"}}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s := startSession(t, childEnv(), "replay", path, "--speed", "4")
	s.waitScreen(15*time.Second, "the recording's address and version, escaped", func(f shot) bool {
		p := f.String()
		return strings.Contains(p, "7000"+shownTitle) && strings.Contains(p, "7.0.15"+shownTitle)
	})
	s.waitScreen(15*time.Second, "the refused BGSAVE or the save's trigger, escaped", func(f shot) bool {
		p := f.String()
		return strings.Contains(p, "ERR "+shownTitle) || strings.Contains(p, "replica "+shownTitle)
	})
	s.press("r")
	s.waitScreen(10*time.Second, "the report's status, escaped", func(f shot) bool {
		return strings.Contains(f.String(), "ok"+shownTitle) || strings.Contains(f.String(), `ok\x1b]0;`)
	})
	s.press("r")
	s.quit()
	checkSession(t, s)
}

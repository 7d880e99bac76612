package procmem

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestSchedRealServer: the main thread of a real server, idle in its event
// loop, stopped by SIGSTOP, asleep in DEBUG SLEEP and working through
// DEBUG POPULATE, as Sched reads it.
func TestSchedRealServer(t *testing.T) {
	r := newReader(t)
	srv, c := servertest.StartWithClient(t)
	pid := int64(srv.PID())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	idle := r.Sched(pid, time.Second, true)
	if idle.At != time.Second || !idle.OnCPU.OK || !idle.RunDelay.OK || !idle.MinFlt.OK || !idle.MajFlt.OK || !idle.STime.OK {
		t.Fatalf("idle: %+v", idle)
	}
	// An idle server waits in epoll_wait; under load it may be runnable
	// for a moment: read until it is seen asleep there.
	for s := idle; s.State != "S" || (s.WaitChan != "do_epoll_wait" && s.WaitChan != "ep_poll"); s = r.Sched(pid, 0, true) {
		if ctx.Err() != nil {
			t.Fatalf("never seen idle in its event loop: %+v", s)
		}
	}
	if s := r.Sched(pid, 0, false); s.WaitChan != "" {
		t.Errorf("wait channel read unasked: %q", s.WaitChan)
	}

	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	// The signal is delivered at once, but the state changes when the
	// thread next runs.
	for s := r.Sched(pid, 0, true); s.State != "T"; s = r.Sched(pid, 0, true) {
		if ctx.Err() != nil {
			t.Fatalf("never seen stopped: %+v", s)
		}
	}
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}

	slept := make(chan error, 1)
	go func() { slept <- c.Do(ctx, "debug", "sleep", "0.5").Err() }()
	sawSleep := false
	for !sawSleep {
		s := r.Sched(pid, 0, true)
		sawSleep = s.State == "S" && strings.Contains(s.WaitChan, "nanosleep")
		select {
		case err := <-slept:
			if err != nil {
				t.Fatal(err)
			}
			if !sawSleep {
				t.Fatal("DEBUG SLEEP never seen asleep in a nanosleep")
			}
			slept <- nil
		default:
		}
	}
	<-slept

	before := r.Sched(pid, 0, false)
	if err := c.Do(ctx, "debug", "populate", "200000", "key", "300").Err(); err != nil {
		t.Fatal(err)
	}
	after := r.Sched(pid, 0, false)
	if after.OnCPU.V <= before.OnCPU.V || after.MinFlt.V <= before.MinFlt.V || after.STime.V < before.STime.V {
		t.Errorf("200k keys cost no CPU or faults: %+v then %+v", before, after)
	}
	if _, err := os.Stat("/proc/pressure/cpu"); err == nil != after.CPUPressure.OK {
		t.Errorf("CPU pressure %+v; the file's error %v", after.CPUPressure, err)
	}
}

func TestSchedMissing(t *testing.T) {
	r := newReader(t)
	srv := servertest.StartDefault(t)
	pid := srv.PID()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	s := r.Sched(int64(pid), 0, true)
	if s.State != "" || s.OnCPU.OK || s.MinFlt.OK || s.WaitChan != "" {
		t.Errorf("an ended process: %+v", s)
	}
	if s := r.Sched(0, 0, true); s != (source.ProcSched{At: 0}) {
		t.Errorf("pid 0: %+v", s)
	}
}

// TestSchedParse: a proc tree of the test's own, with a process name that
// holds spaces and parentheses, and odd pressure files.
func TestSchedParse(t *testing.T) {
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	task := filepath.Join(proc, "77", "task", "77")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "self", "stat"), "1 (x) R")
	write(filepath.Join(task, "stat"), "77 (a) b (c) T 1 77 77 0 -1 4194560 1234 0 7 0 18 250 0 0 20 0 5 0\n")
	write(filepath.Join(task, "schedstat"), "291207863 2914383119 816\n")
	write(filepath.Join(task, "wchan"), "do_signal_stop")
	write(filepath.Join(proc, "pressure", "cpu"), "some avg10=98.50 avg60=91.19 avg300=54.51 total=288076125\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	write(filepath.Join(proc, "pressure", "memory"), "full avg10=0.00 total=5\n")
	write(filepath.Join(proc, "pressure", "io"), "some avg10=0.00 total=-3\n")
	r, err := NewAt(proc)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Sched(77, 5, true)
	want := source.ProcSched{At: 5, State: "T", WaitChan: "do_signal_stop",
		OnCPU: source.Some(291207863 * time.Nanosecond), RunDelay: source.Some(2914383119 * time.Nanosecond),
		MinFlt: source.Some[int64](1234), MajFlt: source.Some[int64](7), STime: source.Some(2500 * time.Millisecond),
		CPUPressure: source.Some(288076125 * time.Microsecond)}
	if s != want {
		t.Errorf("read\n%+v\nwant\n%+v", s, want)
	}
	write(filepath.Join(task, "stat"), "77 (no close paren R 1")
	if s := r.Sched(77, 0, false); s.State != "" || s.MinFlt.OK {
		t.Errorf("a broken stat: %+v", s)
	}
}

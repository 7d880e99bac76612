//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// lastAt is the wall time of a recording's newest event.
func lastAt(r *record.Recording) time.Time {
	var last time.Duration
	for _, ev := range r.Events {
		last = max(last, ev.Offset)
	}
	return r.Header.Epoch.Add(last)
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestRecordingKilled: vkwatch recording two real servers to a .zst file
// is killed with SIGKILL; the file reads up to its last whole block with a
// note that it was cut short, at most about a second is missing, and the
// real binary replays it.
func TestRecordingKilled(t *testing.T) {
	for _, name := range []string{"night.jsonl.zst", "night.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			a := servertest.Start(t, server.Options{})
			b := servertest.Start(t, server.Options{})
			path := filepath.Join(t.TempDir(), name)
			s := startSession(t, childEnv(), "--record", path, a.Addr, b.Addr)
			waitRecorded(t, path, "3 s of samples of both servers", func(r *record.Recording) bool {
				seen := map[source.NodeID]time.Duration{}
				for _, ev := range r.Events {
					if ev.Kind == source.EventSample {
						seen[ev.Node] = ev.Offset
					}
				}
				return len(seen) == 2 && seen[source.NodeID(a.Addr)] > 3*time.Second && seen[source.NodeID(b.Addr)] > 3*time.Second
			})
			// The worst moment to die: just before the next flush. A flush
			// shows as the file growing; the next is due a second later.
			size := fileSize(t, path)
			servertest.WaitFor(t, 5*time.Second, "a flush", func() bool { return fileSize(t, path) > size })
			time.Sleep(900 * time.Millisecond) // not a synchronisation: the moment of the kill
			killed := time.Now()
			if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			s.waitKilled(10 * time.Second)

			r := readRecording(t, path)
			if !r.Truncated || !strings.Contains(r.Why, "compressed frame") {
				t.Errorf("a killed recording reads as truncated %v (%q), want cut short inside a compressed frame", r.Truncated, r.Why)
			}
			missing := killed.Sub(lastAt(r))
			t.Logf("%s: %d events, the last %s before the SIGKILL", name, len(r.Events), missing.Round(time.Millisecond))
			// The writer flushes at least once a second; one sampling
			// interval (200ms) and scheduling on a loaded machine on top.
			if missing > 1500*time.Millisecond {
				t.Errorf("the last recorded event is %s before the SIGKILL, want at most about a second", missing)
			}

			p := startSession(t, childEnv(), "replay", path, "--speed", "4")
			p.waitScreen(15*time.Second, "the killed recording replayed", func(f shot) bool {
				return strings.Contains(f.String(), "replay ") && strings.Contains(f.String(), a.Addr) && strings.Contains(f.String(), b.Addr)
			})
			p.quit()
			if !strings.Contains(p.stderr.String(), "compressed frame") {
				t.Errorf("replay said nothing of the recording being cut short; stderr: %q", p.stderr.String())
			}
		})
	}
}

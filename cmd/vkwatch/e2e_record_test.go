//go:build linux

package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// latest is the offset of a recording's newest event.
func latest(r *record.Recording) time.Duration {
	var last time.Duration
	for _, ev := range r.Events {
		last = max(last, ev.Offset)
	}
	return last
}

// lastAt is the wall time of a recording's newest event.
func lastAt(r *record.Recording) time.Time { return r.Header.Epoch.Add(latest(r)) }

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
			a := servertest.StartDefault(t)
			b := servertest.StartDefault(t)
			path := filepath.Join(t.TempDir(), name)
			// An INFO sample every 200 ms, at rest too (the default samples a
			// server at rest once a second): the events are dense enough
			// that what is missing is what the writer had not flushed.
			s := startSession(t, childEnv(), "--record", path, "--idle-interval", "200ms", a.Addr, b.Addr)
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
			flushed := time.Now()
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
			// The writer flushes at least once a second, so what is lost is
			// what came after the last flush, the one seen (polled every
			// 10 ms) about 0.9 s before the kill, and the sampling interval
			// (200 ms) it may have fallen in; 300 ms for scheduling on a
			// loaded machine on top. A writer that flushed less often, or
			// flushed less than it held, loses more.
			if bound := killed.Sub(flushed) + 200*time.Millisecond + 300*time.Millisecond; missing > bound {
				t.Errorf("the last recorded event is %s before the SIGKILL, want at most %s (the flush seen %s before it, one interval, scheduling)", missing, bound, killed.Sub(flushed).Round(time.Millisecond))
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

// run runs the vkwatch binary to its end and returns its stdout.
func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(vkwatchBin, args...)
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vkwatch %s: %v; stderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// TestRecordingCutOfOneSave: a real BGSAVE (b pressed in the monitor) on a
// recording with idle time around it; `vkwatch recording` lists it, and its
// cut with a margin replays on its own, holds much less than the whole,
// and gives the very report the original gives, and the live run wrote.
func TestRecordingCutOfOneSave(t *testing.T) {
	srv, _ := servertest.StartSlowSave(t, 15000, 200, 100)
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.jsonl.zst")
	s := startSession(t, childEnv(), "--record", path, srv.Addr)
	waitRecorded(t, path, "12 s of samples before the save", func(r *record.Recording) bool { return latest(r) > 12*time.Second })
	s.press("b")
	var ended time.Duration
	waitRecorded(t, path, "the save's end", func(r *record.Recording) bool {
		for _, ev := range r.Events {
			if ev.Kind == source.EventSaveEnded {
				ended = ev.Offset
				return true
			}
		}
		return false
	})
	waitRecorded(t, path, "12 s of samples after the save", func(r *record.Recording) bool { return latest(r) > ended+12*time.Second })
	s.quit()

	list := run(t, "recording", path)
	if !regexp.MustCompile(`(?m)^  1 +\S+ \S+ +` + regexp.QuoteMeta(srv.Addr) + ` +BGSAVE fork +vkwatch \(BGSAVE\) +ok `).MatchString(list) {
		t.Fatalf("the listing does not show the save as save 1:\n%s", list)
	}
	cut := filepath.Join(dir, "save1.jsonl.zst")
	// The report's "before" figures look 5 s back from the last sample
	// before the save, which at rest comes once a second (and a little
	// later on a loaded machine): a 6 s margin could leave the window's
	// first sample out (seen in CI: PingBefore 2,384 PINGs in the cut,
	// 2,857 in the whole); 8 s holds it.
	const margin = 8 * time.Second
	run(t, "recording", path, "--save", "1", "--margin", margin.String(), "-o", cut)

	whole, part := readRecording(t, path), readRecording(t, cut)
	rf, err := record.OpenFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	first := slices.MinFunc(part.Events, func(a, b source.Event) int { return cmp.Compare(a.Offset, b.Offset) }).Offset
	if last := latest(part); rf.Start != first || rf.End != last {
		t.Errorf("the cut's index spans %s..%s (marks %v), its events %s..%s", rf.Start, rf.End, rf.Marks, first, last)
	}
	rf.Close()
	// Derived again by the reader's trackers, from the samples and
	// commands, the whole's and the cut's own.
	want, got := whole.Derived, part.Derived
	if len(want) != 1 || len(got) != 1 {
		t.Fatalf("%d reports from the whole, %d from the cut; want one each", len(want), len(got))
	}
	if !reflect.DeepEqual(want[0], got[0]) {
		t.Errorf("the cut's report differs from the whole's:\nwhole %+v\n  cut %+v", want[0], got[0])
	}
	first = part.Events[0].Offset
	if span, most := latest(part)-first, want[0].Observed+2*margin+time.Second; len(part.Events) >= len(whole.Events) || span > most {
		t.Errorf("the cut holds %d of the whole's %d events, over %s; want at most %s", len(part.Events), len(whole.Events), span, most)
	}
	var live *source.SaveReport
	for _, ev := range part.Events {
		if ev.Kind == source.EventSaveEnded {
			live = ev.Report
		}
	}
	// Observed re-derived from t and the save's start, each written to the
	// microsecond (source/record's precision rule): within two.
	if live == nil || live.Trigger.Kind != source.TriggerUser || live.PeakCOW != got[0].PeakCOW || (live.Observed-got[0].Observed).Abs() > 2*time.Microsecond {
		t.Fatalf("the cut's live report %+v, re-derived %+v", live, got[0])
	}
	if first < live.Started-margin-time.Second || first > live.Started-margin+time.Second {
		t.Errorf("the cut starts at %s, its save at %s: want %s of margin", first, live.Started, margin)
	}

	p := startSession(t, childEnv(), "replay", cut, "--speed", "4")
	p.waitScreen(15*time.Second, "the cut replayed with its save", func(f shot) bool {
		return strings.Contains(f.String(), "replay ") && strings.Contains(f.String(), srv.Addr) && strings.Contains(f.String(), "BGSAVE")
	})
	p.quit()

	// replay --from/--to plays just that window of the whole: its length
	// on the status line is the window's.
	from, to := live.Started-2*time.Second, live.Ended+2*time.Second
	w := startSession(t, childEnv(), "replay", path, "--from", fmt.Sprintf("+%s", from), "--to", fmt.Sprintf("+%s", to))
	length := regexp.MustCompile(`replay \d+:\d\d / (\d+):(\d\d)`)
	f := w.waitScreen(15*time.Second, "the window's replay", func(f shot) bool { return length.MatchString(f.String()) })
	m := length.FindStringSubmatch(f.String())
	mins, _ := strconv.Atoi(m[1])
	secs, _ := strconv.Atoi(m[2])
	if got, want := time.Duration(mins*60+secs)*time.Second, (to - from).Truncate(time.Second); got < want-time.Second || got > want {
		t.Errorf("replay --from --to plays %s, want the window's %s", got, want)
	}
	w.quit()
}

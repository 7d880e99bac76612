package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// stuckEvents is one server whose save's keys processed stand at 5,000
// from 10 s to stillUntil, then move on, 100 keys a sample.
func stuckEvents(valkey bool, from, to, stillUntil time.Duration) []source.Event {
	f := uitest.NewFake(0, valkey)
	var evs []source.Event
	if from == 0 {
		evs = append(evs, f.Connected(0))
	}
	f.Save = &source.SaveProgress{Kind: source.SaveFork, Started: 10 * time.Second, Trigger: source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}}
	for off := from; off < to; off += uitest.Tick {
		ev := f.SampleEvent(off)
		s := ev.Sample
		switch {
		case off < 10*time.Second:
			s.Save = nil
		case off < stillUntil:
			s.Save.Processed = source.Some[int64](5000)
		default:
			s.Save.Processed = source.Some(5000 + int64(off-stillUntil)/int64(uitest.Tick)*100)
		}
		if valkey {
			s.Config.Method = "fork" // the fake's Valkey saves forkless otherwise
		}
		if s.Save != nil {
			s.Info.RDBInProgress = source.Some[int64](1)
		}
		evs = append(evs, ev)
	}
	return evs
}

// A save whose progress stands still gets a badge and a footer line; when
// it moves again both go.
func TestStuckSaveBadgeShownAndGone(t *testing.T) {
	for _, valkey := range []bool{false, true} {
		m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, stuckEvents(valkey, 0, 14*time.Second, 16*time.Second))
		if strings.Contains(plainView(m), "stuck?") {
			t.Fatalf("stuck after 4 s of standing still:\n%s", plainView(m))
		}
		m = feed(t, m, stuckEvents(valkey, 14*time.Second, 16*time.Second, 16*time.Second))
		v := plainView(m)
		badge := lineWith(t, m, "⚠ stuck? no progress for")
		if !strings.Contains(badge, "at 5,000/100,000 keys") {
			t.Errorf("badge %q", badge)
		}
		foot := lineWith(t, m, "⚠ stuck? the save on "+uitest.AddrA+": no progress for")
		if strings.Contains(badge+foot, "BGSAVE CANCEL") != valkey {
			t.Errorf("valkey %v: x offered %v:\n%s", valkey, !valkey, v)
		}
		m = feed(t, m, stuckEvents(valkey, 16*time.Second, 20*time.Second, 16*time.Second))
		if strings.Contains(plainView(m), "stuck?") {
			t.Errorf("still stuck after the save moved on:\n%s", plainView(m))
		}
		// Far past its forecast duration, a moving save is stuck too.
		m = feed(t, m, stuckEvents(valkey, 20*time.Second, 40*time.Second, 16*time.Second))
		if l := lineWith(t, m, "⚠ stuck? running "); !strings.Contains(l, "forecast") {
			t.Errorf("overrun badge %q", l)
		}
	}
}

// THP on screen, from the fake /sys and smaps_rollup trees of
// source/forecast/testdata (the kernel's setting cannot be changed here):
// where huge pages back the heap, the next-save line warns that a write
// copies 2 MiB, at 80x24 briefly and at 200x50 with its cause; where
// they cannot (never, none in use), nothing.
func TestTHPWarningOnScreen(t *testing.T) {
	events := func(tree string) []source.Event {
		thp := forecast.ReadTHP(filepath.Join("..", "source", "forecast", "testdata", tree), 4242)
		f := uitest.NewFake(0, false)
		var sc uitest.Script
		sc.Add(f.Connected(0))
		sc.Run(f, 0, 3*time.Second, nil)
		for _, ev := range sc.Events {
			if ev.Sample != nil {
				ev.Sample.Proc.THPKernel, ev.Sample.Proc.AnonHugePages = thp.Kernel, thp.AnonHuge
				ev.Sample.Config.DisableTHP = source.Some(true)
			}
		}
		return sc.Events
	}
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		m := feed(t, sized(newTestModel(uitest.AddrA), size[0], size[1]), events("thp-always"))
		want := []string{"cow", "~103 MiB upper bound ⚠ 2 MiB pages", "headroom", "ok"}
		if size[0] == 200 {
			want = []string{"cow", "~103 MiB upper bound ⚠ 2 MiB pages", "footprint", "218 MiB",
				"huge pages", "AnonHugePages 260 MiB: a write copies 2 MiB, not 4 KiB"}
		}
		wantFields(t, fmt.Sprintf("%dx%d", size[0], size[1]), plainView(m), want...)
		m = feed(t, sized(newTestModel(uitest.AddrA), size[0], size[1]), events("thp-never"))
		if v := plainView(m); strings.Contains(v, "THP") || strings.Contains(v, "huge pages") {
			t.Errorf("%dx%d: warned with THP [never] and none in use:\n%s", size[0], size[1], v)
		}
	}
}

package page

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	src "github.com/vkwatch/vkwatch/source/report"
)

// forklessSave is a forkless save from second from to second to: no
// child, so no copy-on-write by construction; blocked_clients before,
// at its peak during, and after.
func forklessSave(from, to float64, before, during, after source.Opt[int64]) src.Save {
	sv := forkSave(from, to, 0, 0.5, 1)
	sv.Kind, sv.Method = source.SaveForkless, "forkless"
	sv.COW, sv.COWFrom, sv.PeakCOW = source.Some[int64](0), source.FromNoChild, source.Some[int64](0)
	sv.BlockedBefore, sv.BlockedDuring, sv.BlockedAfter = before, during, after
	return sv
}

// TestForklessBlockedWriters: the summary's writers blocked are a save's
// blocked_clients above their level before it (else after it; a BLPOP
// blocks at any time: SaveReport.BlockedWriters), n/a where the field was
// not read; a forkless save's copy-on-write is none by construction, and
// the sentences say so rather than name rdb_last_cow_size, which it leaves
// as the last fork save set it.
func TestForklessBlockedWriters(t *testing.T) {
	some := source.Some[int64]
	var none source.Opt[int64]
	for _, tt := range []struct {
		name   string
		save   src.Save
		want   string
		copied string
	}{
		{"forkless", forklessSave(5, 40, some(1), some(4), some(1)), `data-v="3">3`, "Nothing was copied on write: a forkless save forks no child. A save held up to 3 writers"},
		{"forkless, level before unread", forklessSave(5, 40, none, some(4), some(2)), `data-v="2">2`, "forks no child"},
		{"forkless, blocked_clients not read", forklessSave(5, 40, none, none, none), `data-v="">n/a`, "forks no child"},
		{"fork", forkSave(5, 40, 0, 0.5, 1), `data-v="0">0`, "the server's rdb_last_cow_size"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sv := tt.save
			if tt.name == "fork" {
				sv.BlockedBefore, sv.BlockedDuring, sv.BlockedAfter = some(0), some(0), some(0)
			}
			page := string(render(t, []src.Input{syntheticInput(sv)}))
			summary := page[strings.Index(page, `<table class="summary">`):]
			if cell := summary[strings.Index(summary, `data-col="blocked"`):]; !strings.HasPrefix(cell, `data-col="blocked" `+tt.want) {
				t.Errorf("summary: writers blocked %q, want %q", cell[:40], tt.want)
			}
			row := page[strings.Index(page, `<tr data-save="1">`):]
			if cell := row[strings.Index(row, `data-col="blocked"`):]; !strings.HasPrefix(cell, `data-col="blocked" `+tt.want) {
				t.Errorf("table of saves: writers blocked %q, want %q", cell[:40], tt.want)
			}
			story := page[strings.Index(page, `<p class="story"`):]
			story = story[:strings.Index(story, "</p>")]
			if !strings.Contains(story, strings.ReplaceAll(tt.copied, "'", "&#39;")) {
				t.Errorf("the sentences do not say %q: %s", tt.copied, story)
			}
		})
	}
}

// TestSaveKindIsTheSaves: the table of saves names the method a save
// used (its kind, from rdb_current_bgsave_type), and adds the setting only
// where the save's report says it forked under bgsave-default-method
// forkless (MethodNote). The setting sampled at a save's start may be up
// to two seconds old (CONFIG GET is read every 2 s): a forkless save
// started just after CONFIG SET bgsave-default-method forkless still shows
// the old "fork" there, and the page must not pin it on the save.
func TestSaveKindIsTheSaves(t *testing.T) {
	forced := forkSave(5, 40, 0, 0.5, 1)
	forced.Method, forced.MethodNote = "forkless", "forked, though bgsave-default-method is forkless (rdb_current_bgsave_type fork)"
	stale := forklessSave(5, 40, source.Opt[int64]{}, source.Opt[int64]{}, source.Opt[int64]{})
	stale.Method = "fork"
	plain := forkSave(5, 40, 0, 0.5, 1)
	plain.Method = "fork"
	for _, tt := range []struct {
		name string
		save src.Save
		want string
	}{
		{"forkless, the setting sampled before CONFIG SET", stale, "BGSAVE forkless"},
		{"fork forced under forkless", forced, "BGSAVE fork (bgsave-default-method forkless)"},
		{"fork", plain, "BGSAVE fork"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			page := string(render(t, []src.Input{syntheticInput(tt.save)}))
			row := page[strings.Index(page, `<tr data-save="1">`):]
			row = row[:strings.Index(row, "</tr>")]
			if !strings.Contains(row, `<td class="t w">`+tt.want+`</td>`) {
				t.Errorf("table of saves, kind: want %q in\n%s", tt.want, row)
			}
		})
	}
}

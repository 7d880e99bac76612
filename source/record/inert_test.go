package record

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// A replica (or a node) whose address begins with = would be a formula in
// a spreadsheet: its text cells get a leading ', its numbers stay numbers,
// and the CSV stays well quoted.
func TestCSVNeutralisesFormulas(t *testing.T) {
	epoch := time.Now()
	const addr = `=HYPERLINK("http://x","a,b"):6380`
	evs := []source.Event{
		{Node: "=1+2", Kind: source.EventConnected, Offset: time.Second,
			Identity: &source.Identity{Addr: addr, Version: "7.0.15", Role: "slave"}},
		{Node: "=1+2", Kind: source.EventSample, Offset: 2 * time.Second, Sample: &source.Sample{
			Info: source.Info{RDBLastTime: source.Some[int64](-1)},
			Save: &source.SaveProgress{Kind: source.SaveFork, Trigger: source.Trigger{Kind: source.TriggerReplica, Detail: "@SUM(A1)"}},
		}},
		{Node: "n1", Kind: source.EventDisconnected, Offset: 3 * time.Second, Err: "-ERR\tx"},
	}
	data := writeAll(t, CSV, testHeader(epoch), evs)
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("CSV no longer parses: %v\n%s", err, data)
	}
	col := func(row []string, name string) string {
		for i, c := range csvColumns {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	for _, c := range []struct {
		row       int
		col, want string
	}{
		{1, "node", "'=1+2"},
		{1, "detail", "'" + addr + " redis 7.0.15 role=slave pid="},
		{2, "trigger_detail", "'@SUM(A1)"},
		{2, "rdb_last_bgsave_time_sec", "-1"},
		{3, "detail", "'-ERR\tx"},
	} {
		if got := col(rows[c.row], c.col); got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.col, got, c.want)
		}
	}
	if evs[0].Identity.Addr != addr {
		t.Error("writing changed the caller's event")
	}
}

// A recording keeps a hostile server's exact text, and is still safe to
// print: JSON escapes C0 controls, and the writer escapes the C1 and bidi
// controls JSON would leave raw.
func TestJSONLKeepsHostileTextInert(t *testing.T) {
	const hostile = "\x1b]0;PWNED\x07\x1b[31m\u009b2J\u202e"
	h := testHeader(time.Now())
	h.Servers[0].Addr = "127.0.0.1:1" + hostile
	h.Settings["interval"] = "150ms" + hostile
	evs := []source.Event{
		{Node: "n1", Kind: source.EventDisconnected, Offset: time.Second, Err: "ERR " + hostile},
		{Node: "n1", Kind: source.EventCommand, Offset: 2 * time.Second, Command: &source.CommandResult{Command: "BGSAVE", Err: hostile}},
	}
	data := writeAll(t, JSONL, h, evs)
	for _, raw := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if bytes.Contains(data, []byte(raw)) {
			t.Errorf("the recording holds a raw %q:\n%s", raw, data)
		}
	}
	rec, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Header.Servers[0].Addr; got != h.Servers[0].Addr {
		t.Errorf("header address read back %q, want %q", got, h.Servers[0].Addr)
	}
	if got := rec.Header.Settings["interval"]; got != h.Settings["interval"] {
		t.Errorf("setting read back %q", got)
	}
	if len(rec.Events) != 2 || rec.Events[0].Err != evs[0].Err || rec.Events[1].Command.Err != hostile {
		t.Errorf("events read back %+v", rec.Events)
	}
}

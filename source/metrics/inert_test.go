package metrics

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/vkwatch/vkwatch/source"
)

// A peer's text in a label (its address) holding escapes or invalid UTF-8
// is served inert: the client library would panic on invalid UTF-8, and a
// terminal would run the escapes. A save's status, the server's text too,
// is served as one of a closed set.
func TestLabelsFromAHostilePeerAreInert(t *testing.T) {
	const hostile = "\x1b]0;PWNED\x07\u009b2J\xff"
	node := source.NodeID("node" + hostile)
	e := New("")
	e.Observe(source.Event{Node: node, Kind: source.EventConnected, Identity: &source.Identity{Addr: "127.0.0.1:1" + hostile}})
	e.Observe(source.Event{Node: node, Kind: source.EventSaveEnded, Report: &source.SaveReport{
		Node: node, Kind: source.SaveFork, Status: "ok" + hostile, COW: source.Some[int64](4096)}})
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, body)
	}
	if !utf8.Valid(body) {
		t.Error("the exposition is not valid UTF-8")
	}
	for _, raw := range [][]byte{{0x1b}, {0x07}, []byte("\u009b")} {
		if bytes.Contains(body, raw) {
			t.Errorf("the exposition holds a raw %q:\n%s", raw, body)
		}
	}
	if !bytes.Contains(body, []byte(`addr="127.0.0.1:1\\x1b]0;PWNED\\x07`)) {
		t.Errorf("the address is not shown escaped:\n%s", body)
	}
	if !bytes.Contains(body, []byte(`vkwatch_last_save_status{addr="127.0.0.1:1\\x1b]0;PWNED\\x07\\u009b2J\\xff",kind="bgsave",method="fork",status="unknown"} 1`)) {
		t.Errorf("the made-up status is not shown as unknown:\n%s", body)
	}
}

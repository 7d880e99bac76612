package record

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func TestMarshalReports(t *testing.T) {
	reps := []source.SaveReport{{
		Node: "127.0.0.1:7000", Addr: "127.0.0.1:7000", Kind: source.SaveFork, Status: "ok",
		Started: 1500 * time.Millisecond, Ended: 4 * time.Second,
		COW:        source.Some[int64](12345),
		PingDuring: source.Latency{Count: 3, Max: 20 * time.Millisecond},
	}}
	b, err := MarshalReports(reps)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if len(got) != 1 {
		t.Fatalf("want 1 report, got %d", len(got))
	}
	r := got[0]
	if r["kind"] != "BGSAVE fork" || r["cow"] != float64(12345) || r["started_ns"] != 1.5e9 {
		t.Errorf("kind/cow/started_ns wrong: %v", r)
	}
	if v, ok := r["peak_live_cow"]; ok {
		t.Errorf("absent peak_live_cow should be left out, got %v", v)
	}
	ping := r["ping_during"].(map[string]any)
	if ping["max_ns"] != float64(20e6) {
		t.Errorf("ping_during.max_ns = %v, want 20000000", ping["max_ns"])
	}
	empty, err := MarshalReports(nil)
	if err != nil || !json.Valid(empty) {
		t.Fatalf("empty: %v %s", err, empty)
	}
}

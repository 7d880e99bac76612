package bench

import (
	"reflect"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert/inerttest"
)

// TestInertSummariesReachEveryString: every string a bench summary can
// carry (the servers' addresses, statuses, errors), filled by reflection,
// is clean in what the tables print from, and the summaries given are
// left as they were.
func TestInertSummariesReachEveryString(t *testing.T) {
	s := make([]Summary, 1)
	inerttest.Fill(&s[0])
	got := inertSummaries(s)
	raw, seen := inerttest.Raw(got, "s", reflect.TypeFor[source.NodeID]())
	for _, p := range raw {
		t.Errorf("%s left raw", p)
	}
	if seen < 10 {
		t.Fatalf("only %d strings checked", seen)
	}
	inerttest.Strings(s, "s", func(path, v string) {
		if v != inerttest.Hostile {
			t.Errorf("original %s changed to %q", path, v)
		}
	})
}

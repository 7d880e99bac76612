package result

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
	inerttest.Check(t, s, got, "s", 10, reflect.TypeFor[source.NodeID]())
}

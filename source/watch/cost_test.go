package watch

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// serverUsec is the server's own time on every command so far, by INFO
// commandstats (the reading itself is counted in the next one).
func serverUsec(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	text, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for line := range strings.Lines(text) {
		_, fields, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		var calls, usec int64
		if _, err := fmt.Sscanf(fields, "calls=%d,usec=%d", &calls, &usec); err != nil {
			t.Fatalf("commandstats line %q: %v", line, err)
		}
		total += usec
	}
	return total
}

// vkwatch's cost on a server it watches alone equals, within 10%, the
// time the server's own counters say its commands took: every command
// counted (PINGs on the probe's connection, INFO, CONFIG GET, the set-up
// of connections) and priced by the server's own time per call.
func TestObserverCostMatchesTheServer(t *testing.T) {
	srv, c := servertest.StartWithClient(t)
	x := startWatch(t, srv.Addr, Config{Interval: 100 * time.Millisecond, CostEvery: 2 * time.Second})
	// A sample of a new reading of commandstats, paired with the server's
	// counters read right after it (a few PINGs later).
	var lastRead time.Duration
	reading := func(after time.Duration) (source.Event, int64) {
		ev := x.next(t, 10*time.Second, "a new reading of commandstats", func(ev source.Event) bool {
			if ev.Kind != source.EventSample || !ev.Sample.Observer.Seconds.OK {
				return false
			}
			o := ev.Sample.Observer
			fresh := o.ReadAt != lastRead && ev.Offset > after && o.Share.OK
			lastRead = o.ReadAt
			return fresh
		})
		return ev, serverUsec(t, c)
	}
	first, u1 := reading(0)
	if w := first.Sample.Observer.Window; w < time.Second || w > 5*time.Second {
		t.Errorf("window %s, want about 2s", w)
	}
	time.Sleep(10 * time.Second) // the span measured, not a synchronisation
	last, u2 := reading(x.clock.Offset())
	s1, s2 := first.Sample.Observer.Seconds.V, last.Sample.Observer.Seconds.V
	got, want := s2-s1, float64(u2-u1)/1e6
	t.Logf("over %s: vkwatch says %.3f ms, the server %.3f ms; share %.4f%% of a core",
		(last.Offset - first.Offset).Round(time.Millisecond), got*1e3, want*1e3, 100*last.Sample.Observer.Share.V)
	if want <= 0 || math.Abs(got-want) > 0.1*want {
		t.Errorf("vkwatch's cost %.3f ms, the server's counters %.3f ms: more than 10%% apart", got*1e3, want*1e3)
	}
	if sh := last.Sample.Observer.Share.V; sh <= 0 || sh > 0.05 {
		t.Errorf("share %v of a core: want a small positive one", sh)
	}
}

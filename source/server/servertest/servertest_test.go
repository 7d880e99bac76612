package servertest

import (
	"context"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
)

// StartMany's servers are each up, on a port of its own, with the options
// given, more of them than it starts at once.
func TestStartMany(t *testing.T) {
	const n = startAtOnce + 4
	srvs := StartMany(t, n, server.Options{Args: []string{"--hz", "1"}})
	if len(srvs) != n {
		t.Fatalf("%d servers, want %d", len(srvs), n)
	}
	ports := map[int]bool{}
	for _, s := range srvs {
		if ports[s.Port] {
			t.Errorf("port %d twice", s.Port)
		}
		ports[s.Port] = true
		c := Client(t, s)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		hz, err := c.ConfigGet(ctx, "hz").Result()
		cancel()
		if err != nil || hz["hz"] != "1" {
			t.Errorf("%s: hz %v (%v), want 1", s.Addr, hz, err)
		}
	}
}

//go:build linux

package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// persistence reads INFO persistence and memory of c.
func persistence(t *testing.T, c *redis.Client) source.Info {
	t.Helper()
	text, err := c.Info(context.Background(), "persistence", "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	return source.ParseInfo(text)
}

// TestSessionForkWarning: when the last save's copy-on-write no longer
// fits under maxmemory, b sends nothing and says why; b again sends the
// BGSAVE.
func TestSessionForkWarning(t *testing.T) {
	// Few large keys, each save of one slowed by 1 ms: about 2 s in all.
	// (20,000 keys at 100 µs each took over 30 s in a suite run at load 25:
	// every sleep overshoots by the scheduler's latency, so the count of
	// sleeps, not their length, decides how long a loaded machine takes.)
	const keys, size = 2000, 3000
	srv, admin := servertest.StartSlowSave(t, keys, size, 1000)
	ctx := context.Background()
	// During the save every key is rewritten: each page the server writes
	// is copied, so the save costs COW.
	if err := admin.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", size)
	deadline := time.Now().Add(30 * time.Second)
	for in := persistence(t, admin); in.RDBInProgress.V == 1 || !in.RDBLastCOW.OK; in = persistence(t, admin) {
		if time.Now().After(deadline) {
			t.Fatal("the save did not end")
		}
		pipe := admin.Pipeline()
		for i := 0; i < keys; i += 7 {
			pipe.Set(ctx, "key:"+strconv.Itoa(i), value, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	in := persistence(t, admin)
	if in.RDBLastCOW.V <= 0 || in.RDBLastStatus != "ok" {
		t.Fatalf("the save cost no COW: %+v %q", in.RDBLastCOW, in.RDBLastStatus)
	}
	if err := admin.ConfigSet(ctx, "rdb-key-save-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// Room for half of that COW: a fork now may exceed maxmemory.
	maxmem := in.UsedMemory.V + in.RDBLastCOW.V/2
	if err := admin.ConfigSet(ctx, "maxmemory", strconv.FormatInt(maxmem, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	forksBefore := forks(t, admin)

	s := startSession(t, childEnv(), srv.Addr)
	s.waitScreen(15*time.Second, "connected and sampling", func(f shot) bool {
		p := f.String()
		return connected(p) && sampled(p)
	})
	s.press("b")
	s.waitScreen(5*time.Second, "the warning before the fork save", func(f shot) bool {
		p := f.String()
		return strings.Contains(p, "maxmemory") && strings.Contains(p, "again")
	})
	if n := forks(t, admin); n != forksBefore {
		t.Fatalf("total_forks %d -> %d: b forked despite the warning", forksBefore, n)
	}
	s.press("b")
	s.waitScreen(10*time.Second, "the BGSAVE sent after b again", func(f shot) bool {
		return strings.Contains(f.String(), "BGSAVE on "+srv.Addr+": Background saving started")
	})
	if n := forks(t, admin); n != forksBefore+1 {
		t.Errorf("total_forks %d -> %d after confirming, want one fork", forksBefore, n)
	}
	s.quit()
}

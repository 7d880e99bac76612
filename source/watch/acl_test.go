package watch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestWatcherLimitedACLUser watches with an ACL user allowed only INFO,
// PING and CONFIG GET: that is all vkwatch needs to watch. A BGSAVE it may
// not send comes back with the server's NOPERM text verbatim, and the
// watch goes on.
func TestWatcherLimitedACLUser(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	admin := servertest.Client(t, srv)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "reset", "on", ">w-pass-1234",
		"-@all", "+info", "+ping", "+config|get").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "blind", "reset", "on", ">b-pass-1234", "-@all", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	savesBefore := source.ParseInfo(admin.Info(ctx, "persistence").Val()).RDBSaves

	// What the server itself answers this user for BGSAVE.
	direct := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "watcher", Password: "w-pass-1234",
		Protocol: 2, DisableIdentity: true})
	defer direct.Close()
	want := direct.Do(ctx, "BGSAVE").Err()
	if want == nil || !strings.HasPrefix(want.Error(), "NOPERM") {
		t.Fatalf("the server let the limited user BGSAVE: %v", want)
	}

	x := startWatch(t, "redis://watcher:w-pass-1234@"+srv.Addr, Config{})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	s := x.next(t, 10*time.Second, "a sample with ops/s and PINGs", sampleWhere(func(s *source.Sample) bool {
		return s.OpsPerSec.OK && s.Ping.Count > 0
	})).Sample
	if s.Config.Err != "" || !s.Config.RDBKeySaveDelay.OK || !s.Info.UsedMemory.OK {
		t.Errorf("CONFIG GET or INFO failed for the limited user: config %+v", s.Config)
	}

	r := x.w.Do(ctx, "BGSAVE")
	if r.Err != want.Error() || r.Reply != "" {
		t.Errorf("BGSAVE as the limited user: %+v, want the server's %q verbatim", r, want.Error())
	}
	// The answer is also an event, and sampling goes on after it with no
	// disconnect.
	x.next(t, 10*time.Second, "the command's answer", func(ev source.Event) bool {
		return ev.Kind == source.EventCommand && ev.Command.Err == want.Error()
	})
	for range 3 {
		x.next(t, 10*time.Second, "a sample after the refusal", func(ev source.Event) bool {
			if ev.Kind == source.EventDisconnected {
				t.Errorf("disconnected after a NOPERM: %q", ev.Err)
			}
			return ev.Kind == source.EventSample
		})
	}
	if after := source.ParseInfo(admin.Info(ctx, "persistence").Val()).RDBSaves; after != savesBefore {
		t.Errorf("rdb_saves went from %v to %v: a save ran", savesBefore, after)
	}

	// A user who may not even read INFO cannot be watched: one line says so.
	ep, _ := source.ParseAddress("redis://blind:b-pass-1234@" + srv.Addr)
	connectFails(t, "user without INFO", ep, "INFO not permitted", "NOPERM")
	ep, _ = source.ParseAddress("redis://watcher:not-the-pass@" + srv.Addr)
	connectFails(t, "wrong password for the user", ep, "authentication failed", "WRONGPASS")
}

//go:build linux

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestUICancelNotOnRedis: on Redis (no BGSAVE CANCEL; it answers a syntax
// error) the real binary offers no x in its help bar, and x, pressed
// anyway and twice, sends nothing: the footer says this server cannot
// cancel a save and names the version that can.
func TestUICancelNotOnRedis(t *testing.T) {
	srv := servertest.StartDefault(t)
	c := servertest.Client(t, srv)
	s := startSession(t, childEnv(), srv.Addr)
	f := s.waitScreen(15*time.Second, "connected and sampling, the help bar drawn", func(f shot) bool {
		return connected(f.String()) && sampled(f.String()) && strings.Contains(f.String(), "q quit")
	})
	if strings.Contains(f.String(), "cancel save") {
		t.Errorf("the help offers x on Redis:\n%s", f)
	}
	s.press("x")
	s.press("x")
	s.waitScreen(15*time.Second, "x refused, naming the version needed", func(f shot) bool {
		return strings.Contains(f.String(), srv.Addr+" cannot cancel a save: BGSAVE CANCEL needs Valkey 8.1 or later (this is redis 7.")
	})
	if stats := c.Info(context.Background(), "commandstats").Val(); strings.Contains(stats, "cmdstat_bgsave:") {
		t.Errorf("BGSAVE (CANCEL) reached the server:\n%s", stats)
	}
}

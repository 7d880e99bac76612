package watch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestDoFrozenServerTimesOut: a command sent to a stopped server comes
// back as a timeout after CommandTimeout, also as an event; sampling and
// the next command carry on once the server wakes up. A BGSAVE that timed
// out has reached the server: it runs when the server wakes, and the
// watcher sees that save like any other.
func TestDoFrozenServerTimesOut(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	admin := servertest.Client(t, srv)
	x := startWatch(t, srv.Addr, Config{CommandTimeout: time.Second})
	x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	savesBefore := source.ParseInfo(admin.Info(context.Background(), "persistence").Val()).RDBSaves
	// Do's own connection is open: the BGSAVE below reaches the frozen
	// server's socket (on a new connection the handshake would time out
	// first, and BGSAVE would never leave).
	if r := x.w.Do(context.Background(), "PING"); r.Reply != "PONG" {
		t.Fatalf("PING: %+v", r)
	}

	thaw := servertest.Freeze(t, srv)
	start := time.Now()
	r := x.w.Do(context.Background(), "BGSAVE")
	took := time.Since(start)
	if r.OK() || r.Err != "timed out after 1s; the server may still run it when it answers" || r.Reply != "" {
		t.Errorf("BGSAVE to a frozen server: %+v", r)
	}
	if took < time.Second || took > 6*time.Second {
		t.Errorf("Do returned after %s with a 1 s command timeout", took)
	}
	x.next(t, 10*time.Second, "the timeout as an event", func(ev source.Event) bool {
		return ev.Kind == source.EventCommand && ev.Command.Err == r.Err && ev.Command.Command == "BGSAVE"
	})

	thaw()
	x.next(t, 10*time.Second, "a sample after the stall", kind(source.EventSample))
	if r := x.w.Do(context.Background(), "PING"); r.Err != "" || r.Reply != "PONG" {
		t.Errorf("the next command after a timeout: %+v", r)
	}
	rep := x.next(t, 15*time.Second, "the timed-out BGSAVE's report", kind(source.EventSaveEnded)).Report
	if rep.Kind != source.SaveFork || rep.Status != "ok" {
		t.Errorf("report %+v", rep)
	}
	after := source.ParseInfo(admin.Info(context.Background(), "persistence").Val()).RDBSaves
	if !after.OK || after.V != savesBefore.V+1 {
		t.Errorf("rdb_saves %v -> %v, want one save", savesBefore, after)
	}
	if strings.Contains(r.Err, "\n") {
		t.Errorf("error not one line: %q", r.Err)
	}
}

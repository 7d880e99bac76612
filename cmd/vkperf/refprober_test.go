package main

import (
	"context"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestRefProberModes builds the reference prober with the system cc and
// runs it in both modes against a real server until the server has
// executed 100 of its PINGs; then SIGTERM must make it print a summary
// that counts those PINGs, answered, with a plausible round trip. In -n
// mode the round trip comes from the kernel's receive timestamps: a reply
// read without one, or a mode that never reads its replies, fails here.
func TestRefProberModes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ref := buildRefProber(ctx, t.TempDir())
	if !ref.ok() {
		t.Fatal(ref.missing)
	}
	srv, c := servertest.StartWithClient(t)
	ts := &testServer{Server: srv, admin: c}
	for _, nextTick := range []bool{false, true} {
		before, err := pingCalls(ctx, []*testServer{ts})
		if err != nil {
			t.Fatal(err)
		}
		a, err := startHeadless("reference prober", ref.argv(2*time.Millisecond, []*testServer{ts}, nextTick)...)
		if err != nil {
			t.Fatal(err)
		}
		defer a.stop()
		var seen int64
		servertest.WaitFor(t, 20*time.Second, "100 PINGs of the prober", func() bool {
			if a.exited() {
				t.Fatalf("-n %v: the prober ended early (%v): %s", nextTick, a.err, a.output())
			}
			n, err := pingCalls(ctx, []*testServer{ts})
			seen = n - before
			return err == nil && seen >= 100
		})
		if err := a.stop(); err != nil {
			t.Fatal(err)
		}
		if out := a.output(); a.err != nil {
			t.Fatalf("-n %v: %v: %s", nextTick, a.err, out)
		}
		res, err := parseRefOutput(a.output())
		if err != nil || len(res) != 1 {
			t.Fatalf("-n %v: %v, %d results: %q", nextTick, err, len(res), a.output())
		}
		r := res[0]
		// Every PING the server had executed when we looked was answered
		// before the signal, but for the last, which may still be in flight.
		if r.Pings < seen-1 {
			t.Errorf("-n %v: the prober counts %d answered PINGs, the server had executed %d", nextTick, r.Pings, seen)
		}
		if r.P50 <= 0 || r.P50 > time.Second || r.Max < r.P50 {
			t.Errorf("-n %v: round trips p50 %v max %v", nextTick, r.P50, r.Max)
		}
		if r.Addr != srv.Addr {
			t.Errorf("-n %v: summary of %q, want %q", nextTick, r.Addr, srv.Addr)
		}
	}
}

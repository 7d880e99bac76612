package main

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
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
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, ref.argv(2*time.Millisecond, []*testServer{ts}, nextTick)[0],
			ref.argv(2*time.Millisecond, []*testServer{ts}, nextTick)[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var seen int64
		servertest.WaitFor(t, 20*time.Second, "100 PINGs of the prober", func() bool {
			n, err := pingCalls(ctx, []*testServer{ts})
			seen = n - before
			return err == nil && seen >= 100
		})
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("-n %v: %v: %s", nextTick, err, out.String())
		}
		res, err := parseRefOutput(out.String())
		if err != nil || len(res) != 1 {
			t.Fatalf("-n %v: %v, %d results: %q", nextTick, err, len(res), out.String())
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

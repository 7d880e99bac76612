//go:build linux

package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// clientCount is how many connections the server has open.
func clientCount(t *testing.T, c *redis.Client) int {
	t.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(strings.TrimSpace(list), "\n") + 1
}

// TestMonitorLeavesNothing runs the monitor in this process, on a
// pseudo-terminal, with writers on both servers and a BGSAVE outstanding to
// a frozen one, quits, and checks that no goroutine of it is left and
// that every connection it opened is closed.
func TestMonitorLeavesNothing(t *testing.T) {
	a := servertest.StartDefault(t)
	b := servertest.StartDefault(t)
	adminA, adminB := servertest.Client(t, a), servertest.Client(t, b)
	// The writers' keyspace, which they only overwrite, from the admin
	// connections: a preload's own connections could still be closing
	// when the count below is taken.
	var kv []any
	for i := range 100 {
		kv = append(kv, "vkwatch:"+strconv.Itoa(i), "x")
	}
	for _, c := range []*redis.Client{adminA, adminB} {
		if err := c.MSet(context.Background(), kv...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n := clientCount(t, adminA) + clientCount(t, adminB); n != 2 {
		t.Fatalf("%d connections before the monitor, want the 2 admin ones", n)
	}
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptm.Close()
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: termRows, Cols: termCols}); err != nil {
		t.Fatal(err)
	}
	leaks := goleak.IgnoreCurrent()

	scr := newScreen(termRows, termCols)
	scr.reply = func(s string) { ptm.Write([]byte(s)) }
	readEnd := make(chan struct{})
	go func() {
		defer close(readEnd)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			scr.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	var stderr servertest.Output
	ap := &app{
		stdin: tty, stdout: tty, stderr: &stderr,
		getenv: func(string) string { return "" },
		isTTY:  func() bool { return true },
	}
	done := make(chan int, 1)
	go func() {
		done <- ap.run(context.Background(), []string{"--writers", "1", "--keys", "100", a.Addr, b.Addr})
	}()
	exited := false
	t.Cleanup(func() {
		b.Thaw()
		if !exited {
			ptm.Write([]byte("q"))
			<-done
		}
	})

	waitShot := func(what string, cond func(shot) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !cond(scr.snapshot()) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s\nscreen:\n%s\nstderr: %s", what, scr.snapshot(), stderr.String())
			}
			select {
			case code := <-done:
				exited = true
				t.Fatalf("the monitor ended (%d) while waiting for %s; stderr %s", code, what, stderr.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitShot("both panes sampling, with writers", func(f shot) bool {
		l, r := leftPane(f), rightPane(f)
		return connected(l) && connected(r) && sampled(l) && sampled(r) && strings.Contains(l, "w ")
	})
	if err := b.Freeze(); err != nil {
		t.Fatal(err)
	}
	waitShot("the frozen server not answering", func(f shot) bool {
		return strings.Contains(rightPane(f), "not answering for ")
	})
	ptm.Write([]byte("\t"))
	waitShot("the focus on the right pane", func(f shot) bool { return strings.Contains(rightPane(f), "═") })
	ptm.Write([]byte("b"))
	waitShot("BGSAVE on its way to the frozen server", func(f shot) bool {
		return strings.Contains(f.String(), "sending BGSAVE to "+b.Addr)
	})
	ptm.Write([]byte("q"))
	select {
	case code := <-done:
		exited = true
		if code != 0 {
			t.Errorf("exit status %d, want 0; stderr %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the monitor did not end after q")
	}
	tty.Close()
	<-readEnd
	goleak.VerifyNone(t, leaks)

	if err := b.Thaw(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		na, nb := clientCount(t, adminA), clientCount(t, adminB)
		if na == 1 && nb == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connections left open after the monitor: %d on one server, %d on the other (1 is ours)", na-1, nb-1)
		}
		time.Sleep(20 * time.Millisecond) // polling the servers' client lists
	}
}

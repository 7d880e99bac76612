package live

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// TestCrashKeepsTheFirstPanic: a panic in a goroutine that defers Recover
// ends there, cancels the run and is kept with its stack; a later one does
// not replace it, and a goroutine that returns keeps nothing.
func TestCrashKeepsTheFirstPanic(t *testing.T) {
	var c Crash
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := func(f func()) {
		var wg sync.WaitGroup
		wg.Go(func() {
			defer c.Recover(cancel)
			f()
		})
		wg.Wait()
	}
	run(func() {})
	if c.Err() != nil || ctx.Err() != nil {
		t.Fatalf("a goroutine that returned: err %v, run %v", c.Err(), ctx.Err())
	}
	run(func() { panic("first") })
	if ctx.Err() == nil {
		t.Error("the run goes on after a panic")
	}
	run(func() { panic("second") })
	err := c.Err()
	if err == nil || !strings.Contains(err.Error(), "panic: first") || strings.Contains(err.Error(), "second") {
		t.Fatalf("kept %v, want the first panic alone", err)
	}
	if !strings.Contains(err.Error(), "crash_test.go") {
		t.Errorf("the error has no stack of where it panicked:\n%v", err)
	}
}

package live

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// Crash keeps the first panic of a run's background goroutines as an
// error. A panic there would kill the process with the terminal still in
// raw mode: caught, it ends the run through its context (which restores
// the terminal) and comes back as the run's error.
type Crash struct {
	mu  sync.Mutex
	err error
}

// Recover is deferred in a goroutine: it stops a panic, keeps it and
// cancels the run.
func (c *Crash) Recover(cancel context.CancelFunc) {
	if r := recover(); r != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = fmt.Errorf("internal error (please report it): panic: %v\n%s", r, debug.Stack())
		}
		c.mu.Unlock()
		cancel()
	}
}

// Err is the first panic kept, as an error; nil when none came.
func (c *Crash) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

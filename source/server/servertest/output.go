package servertest

import (
	"bytes"
	"sync"
)

// Output holds what a process a test started writes (its stdout or
// stderr), safe to read while the process writes. With Limit > 0 it keeps
// the first Limit bytes only (a log kept to say why something failed,
// bounded) and takes the rest without keeping it.
type Output struct {
	Limit int
	mu    sync.Mutex
	b     bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Limit > 0 && o.b.Len() >= o.Limit {
		return len(p), nil
	}
	return o.b.Write(p)
}

// String is what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

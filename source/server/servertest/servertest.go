// Package servertest starts real servers for tests. A test that needs a
// server fails loudly when none can be started: it is never skipped.
package servertest

import (
	"context"
	"testing"

	"github.com/vkwatch/vkwatch/source/server"
)

// Start starts a server with the given options and stops it when the test
// ends. The debug command is enabled (DEBUG SLEEP, DEBUG POPULATE) unless
// opts.Args already says otherwise.
func Start(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	opts.Args = append([]string{"--enable-debug-command", "yes"}, opts.Args...)
	s, err := server.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("cannot start a server for this test (install redis-server or valkey-server): %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	return s
}

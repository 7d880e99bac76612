package record

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the Writer's
// flusher must stop on Close).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

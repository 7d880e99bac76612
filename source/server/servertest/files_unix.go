//go:build unix

package servertest

import (
	"syscall"
	"testing"
)

// needFiles fails the test, saying what to do, when this process may not
// open n files: Go raises the soft limit to the hard one at start, so the
// hard limit is what a fleet test can have.
func needFiles(t testing.TB, n int) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("the open files limit: %v", err)
	}
	if lim.Cur < uint64(n) {
		t.Fatalf("this test opens about %d files, the limit is %d (hard %d): raise it (ulimit -Hn %d) and run it again", n, lim.Cur, lim.Max, n)
	}
}

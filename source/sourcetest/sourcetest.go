// Package sourcetest holds what the tests of packages built on source
// share: the endpoint of a real server (started with servertest). Package
// source's own tests cannot import it (it imports source); servertest is
// for them. Running a watcher is watchtest's.
package sourcetest

import (
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// Endpoint parses addr (a test server's address or URL), failing the test
// if it does not parse.
func Endpoint(t testing.TB, addr string) source.Endpoint {
	t.Helper()
	ep, err := source.ParseAddress(addr)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

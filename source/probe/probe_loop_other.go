//go:build !linux

package probe

import (
	"context"
	"net"
)

// serveShared: outside Linux every probe has a goroutine of its own (see
// probe_loop_linux.go for the shared loop).
func serveShared(context.Context, *Probe, net.Conn) (bool, error) { return false, nil }

// loopConn is a connection on the shared loop, which only Linux has.
type loopConn struct{}

func (*loopConn) sync()   {}
func (*loopConn) retime() {}

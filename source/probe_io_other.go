//go:build !linux

package source

import "net"

// pingIO is the probe's write and read: net.Conn's (see probe_io_linux.go
// for why Linux differs).
type pingIO struct{ conn net.Conn }

func newPingIO(conn net.Conn) pingIO { return pingIO{conn: conn} }

func (p pingIO) write(b []byte) error {
	_, err := p.conn.Write(b)
	return err
}

func (p pingIO) read(b []byte) (int, error) { return p.conn.Read(b) }

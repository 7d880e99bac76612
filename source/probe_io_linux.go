package source

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// pingIO is the probe's write and read. On a plain TCP or unix connection
// it makes the system calls with syscall.RawSyscall inside a
// syscall.RawConn. net.Conn's Read and Write go through syscall.Syscall,
// whose entersyscall wakes the runtime's sysmon thread whenever the program
// is otherwise idle, and at 500 PINGs a second per server those wake-ups
// cost about as much CPU as the PINGs themselves (cmd/vkperf measured
// vkwatch on two idle servers at 18% of a core before, 9% after). The
// socket is the netpoller's and non-blocking, so a raw call never blocks:
// on EAGAIN, RawConn parks the goroutine on the netpoller as net.Conn does,
// honouring deadlines and Close. TLS connections keep net.Conn's path.
type pingIO struct {
	conn net.Conn
	raw  syscall.RawConn // nil: use conn
	rs   *rawIO
}

// rawIO is the state of the raw calls. Its functions are bound once, so
// that passing them to RawConn does not allocate a closure per PING.
type rawIO struct {
	buf             []byte
	n               uintptr
	errno           syscall.Errno
	readFn, writeFn func(fd uintptr) bool
}

func newPingIO(conn net.Conn) pingIO {
	p := pingIO{conn: conn}
	switch c := conn.(type) {
	case *net.TCPConn:
		p.raw, _ = c.SyscallConn()
	case *net.UnixConn:
		p.raw, _ = c.SyscallConn()
	}
	if p.raw != nil {
		rs := &rawIO{}
		rs.readFn, rs.writeFn = rs.read, rs.write
		p.rs = rs
	}
	return p
}

// call makes one non-blocking system call on fd with rs.buf, retrying on
// EINTR; it reports whether the call is done (anything but EAGAIN).
func (rs *rawIO) call(trap, fd uintptr) bool {
	for {
		rs.n, _, rs.errno = syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&rs.buf[0])), uintptr(len(rs.buf)))
		if rs.errno != syscall.EINTR {
			return rs.errno != syscall.EAGAIN
		}
	}
}

func (rs *rawIO) read(fd uintptr) bool  { return rs.call(syscall.SYS_READ, fd) }
func (rs *rawIO) write(fd uintptr) bool { return rs.call(syscall.SYS_WRITE, fd) }

// opError wraps an error as net.Conn's Read and Write would.
func (p pingIO) opError(op string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: p.conn.LocalAddr().Network(), Source: p.conn.LocalAddr(), Addr: p.conn.RemoteAddr(), Err: err}
}

// write writes all of b.
func (p pingIO) write(b []byte) error {
	if p.raw == nil {
		_, err := p.conn.Write(b)
		return err
	}
	rs := p.rs
	for len(b) > 0 {
		rs.buf = b
		err := p.raw.Write(rs.writeFn)
		if err == nil && rs.errno != 0 {
			err = rs.errno
		}
		if err != nil {
			return p.opError("write", err)
		}
		b = b[rs.n:]
	}
	rs.buf = nil
	return nil
}

// read reads what has arrived, at least one byte; io.EOF when the server
// closed the connection.
func (p pingIO) read(b []byte) (int, error) {
	if p.raw == nil {
		return p.conn.Read(b)
	}
	rs := p.rs
	rs.buf = b
	err := p.raw.Read(rs.readFn)
	rs.buf = nil
	if err == nil && rs.errno != 0 {
		err = rs.errno
	}
	switch {
	case err != nil:
		return 0, p.opError("read", err)
	case rs.n == 0:
		return 0, io.EOF
	}
	return int(rs.n), nil
}

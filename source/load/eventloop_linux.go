//go:build linux

package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// The writers' event loop: one goroutine drives every writer connection
// with epoll, exactly as redis-benchmark's single thread does.
//
// Why: with a goroutine per connection, each SET costs the Go scheduler a
// park, a netpoll wake-up and often a futex hand-off between the two Ps of a
// small machine. Measured on 2 cores that made the client use ~45% more CPU
// per SET than redis-benchmark (12 vs 8.3 us), CPU taken from the server it
// loads, and the writers reached only ~72% of redis-benchmark -c 8. The loop
// below costs about what redis-benchmark costs: a write, a read and a share
// of an epoll_wait per SET. Each writer still has its own connection and
// exactly one SET in flight, so the load on the server is the same.
//
// Connections that are not plain sockets (TLS) cannot be driven this way and
// use the goroutine per connection path (run).

// loopWriter is the state of one connection in the loop.
type loopWriter struct {
	fd       int    // the socket, -1 while disconnected
	buf      []byte // reused command buffer
	pending  []byte // unwritten part of the SET in flight
	in       []byte // reply bytes not yet consumed
	waiting  bool   // a SET was sent and its reply not yet read
	wantOut  bool   // registered for EPOLLOUT (a write was cut short)
	resumeAt time.Time
	backoff  time.Duration
}

// socketFD returns a close-on-exec duplicate of nc's socket, or false when
// nc is not a plain socket.
func socketFD(nc net.Conn) (int, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, false
	}
	fd := -1
	cerr := raw.Control(func(f uintptr) {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f, syscall.F_DUPFD_CLOEXEC, 0)
		if errno == 0 {
			fd = int(r)
		}
	})
	if cerr != nil || fd < 0 {
		return -1, false
	}
	return fd, true
}

type eventLoop struct {
	w     *Writers
	ctx   context.Context
	opts  *redis.Options
	cfg   Config
	value []byte
	rng   *rand.Rand
	epfd  int
	ws    []loopWriter
	tmp   [4096]byte
}

// startEventLoop starts the loop over conns and reports true, or reports
// false (and keeps nothing) when the connections cannot be polled directly.
func (w *Writers) startEventLoop(ctx context.Context, opts *redis.Options, cfg Config, conns []*rawConn, value []byte) bool {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	l := &eventLoop{w: w, ctx: ctx, opts: opts, cfg: cfg, value: value, epfd: epfd,
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		ws:  make([]loopWriter, len(conns))}
	// Only plain sockets can be polled here; decide before taking any.
	for _, c := range conns {
		if _, ok := c.nc.(syscall.Conn); !ok {
			syscall.Close(epfd)
			return false
		}
	}
	for i, c := range conns {
		l.ws[i].fd = -1
		if !l.attach(i, c) {
			// Past the check above this does not happen; the
			// connections are spent, so fail the writer, not the start.
			l.w.record(ctx, errors.New("load: cannot poll a writer connection"))
			l.pause(i)
		}
	}
	w.wg.Go(l.run)
	return true
}

// attach makes c's socket the connection of writer i and registers it.
//
// The loop keeps a duplicate of the socket and closes c: that takes the
// socket out of Go's own netpoller, which would otherwise be woken by every
// reply too (it watches the same socket, edge-triggered) and spend as much
// CPU as the loop itself. The duplicate keeps the connection open: closing
// one descriptor of a socket does not end the connection.
func (l *eventLoop) attach(i int, c *rawConn) bool {
	fd, ok := socketFD(c.nc)
	c.close()
	if !ok {
		return false
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		return false
	}
	lw := &l.ws[i]
	lw.fd = fd
	lw.pending, lw.in, lw.waiting, lw.wantOut = nil, lw.in[:0], false, false
	return true
}

// detach drops writer i's connection.
func (l *eventLoop) detach(i int) {
	lw := &l.ws[i]
	if lw.fd >= 0 {
		syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, lw.fd, nil)
		syscall.Close(lw.fd)
		lw.fd = -1
	}
	lw.pending, lw.in, lw.waiting, lw.wantOut = nil, lw.in[:0], false, false
}

func (l *eventLoop) run() {
	defer func() {
		for i := range l.ws {
			l.detach(i)
		}
		syscall.Close(l.epfd)
	}()
	for i := range l.ws {
		l.send(i)
	}
	events := make([]syscall.EpollEvent, len(l.ws))
	for l.ctx.Err() == nil {
		// Wake at least every 50 ms to notice the end of ctx, and in
		// time for the earliest writer whose backoff ends.
		timeout := 50 * time.Millisecond
		now := time.Now()
		for i := range l.ws {
			if r := l.ws[i].resumeAt; !r.IsZero() {
				timeout = max(0, min(timeout, r.Sub(now)))
			}
		}
		n, err := syscall.EpollWait(l.epfd, events, int((timeout+time.Millisecond-1)/time.Millisecond))
		if err != nil && !errors.Is(err, syscall.EINTR) {
			// Cannot happen with a valid epoll fd; do not spin if it does.
			l.w.record(l.ctx, fmt.Errorf("load: epoll_wait: %w", err))
			return
		}
		for _, ev := range events[:max(n, 0)] {
			i := int(ev.Fd)
			if ev.Events&syscall.EPOLLOUT != 0 && l.ws[i].fd >= 0 {
				l.flush(i)
			}
			if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && l.ws[i].fd >= 0 {
				l.readable(i)
			}
		}
		now = time.Now()
		for i := range l.ws {
			if r := l.ws[i].resumeAt; !r.IsZero() && !now.Before(r) && l.ctx.Err() == nil {
				l.resume(i)
			}
		}
	}
}

// send writes the next SET of writer i.
func (l *eventLoop) send(i int) {
	lw := &l.ws[i]
	if lw.fd < 0 || lw.waiting || !lw.resumeAt.IsZero() {
		return
	}
	lw.buf = appendSetXX(lw.buf[:0], l.cfg.Prefix, l.rng.IntN(l.cfg.Keys), l.value)
	lw.pending, lw.waiting = lw.buf, true
	l.flush(i)
}

// sockIO is op (syscall.Read or syscall.Write) on a non-blocking socket,
// made again while a signal interrupts it; blocked says the socket would
// block (EAGAIN), with no error.
func sockIO(op func(fd int, p []byte) (int, error), fd int, p []byte) (n int, blocked bool, err error) {
	for {
		n, err = op(fd, p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return 0, true, nil
		}
		return n, false, err
	}
}

// flush writes what remains of writer i's SET; a full socket buffer waits
// for EPOLLOUT.
func (l *eventLoop) flush(i int) {
	lw := &l.ws[i]
	for len(lw.pending) > 0 {
		n, blocked, err := sockIO(syscall.Write, lw.fd, lw.pending)
		if blocked {
			break
		}
		if err != nil {
			l.connFailed(i, err)
			return
		}
		lw.pending = lw.pending[n:]
	}
	if want := len(lw.pending) > 0; want != lw.wantOut {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if want {
			ev.Events |= syscall.EPOLLOUT
		}
		if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, lw.fd, &ev); err != nil {
			l.connFailed(i, err)
			return
		}
		lw.wantOut = want
	}
}

// readable reads and handles the replies waiting on writer i's socket.
func (l *eventLoop) readable(i int) {
	lw := &l.ws[i]
	for {
		n, blocked, err := sockIO(syscall.Read, lw.fd, l.tmp[:])
		if blocked {
			break
		}
		if err == nil && n == 0 {
			err = io.EOF
		}
		if err != nil {
			l.connFailed(i, err)
			return
		}
		lw.in = append(lw.in, l.tmp[:n]...)
		if n < len(l.tmp) {
			break // drained: spare the read that would say EAGAIN
		}
	}
	buf, off := lw.in, 0
	for {
		j := bytes.IndexByte(buf[off:], '\n')
		if j < 0 {
			break
		}
		line := buf[off : off+j+1]
		off += j + 1
		if !lw.waiting || len(line) < 3 || line[len(line)-2] != '\r' {
			l.connFailed(i, fmt.Errorf("load: unexpected data from the server: %q", line))
			return
		}
		lw.waiting = false
		switch line[0] {
		case '+':
			l.w.ops.Add(1)
			lw.backoff = 0
		case '-':
			if !l.w.record(l.ctx, ServerError(line[1:len(line)-2])) {
				return
			}
			l.pause(i)
		case '$':
			if string(line) != "$-1\r\n" {
				l.connFailed(i, fmt.Errorf("load: unexpected reply to SET: %q", line))
				return
			}
			l.w.misses.Add(1) // SET XX found no key: nothing written
			lw.backoff = 0
		default:
			l.connFailed(i, fmt.Errorf("load: unexpected reply to SET: %q", line))
			return
		}
	}
	// Keep the unread tail at the front of the buffer.
	lw.in = buf[:copy(buf, buf[off:])]
	l.send(i)
}

// connFailed drops writer i's connection after an error; it is redialled
// when its backoff ends.
func (l *eventLoop) connFailed(i int, err error) {
	l.detach(i)
	if l.w.record(l.ctx, err) {
		l.pause(i)
	}
}

func (l *eventLoop) pause(i int) {
	lw := &l.ws[i]
	lw.backoff = nextBackoff(lw.backoff)
	lw.resumeAt = time.Now().Add(lw.backoff)
}

// resume ends writer i's backoff: it reconnects if needed and sends.
func (l *eventLoop) resume(i int) {
	lw := &l.ws[i]
	lw.resumeAt = time.Time{}
	if lw.fd < 0 {
		c, err := dialRaw(l.ctx, l.opts)
		if err != nil {
			if l.w.record(l.ctx, err) {
				l.pause(i)
			}
			return
		}
		if !l.attach(i, c) {
			if l.w.record(l.ctx, errors.New("load: cannot poll the new connection")) {
				l.pause(i)
			}
			return
		}
	}
	l.send(i)
}

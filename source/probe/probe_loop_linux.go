package probe

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeLoop PINGs every plain TCP and unix-socket probe connection of the
// process from one goroutine, so that the PINGs due at the same moment cost
// one wake-up between them, replies included.
//
// Why it is shaped this way (each step measured with perf stat and
// cmd/vkperf; see the README's Performance section):
//   - A goroutine per probe with a time.Timer paid about four thread
//     wake-ups per PING on an idle machine: the runtime sleeps in epoll
//     with a timeout in whole milliseconds (a 2 ms timer first wakes it
//     early, then again), every timer that readies a goroutine wakes a
//     second thread to look for work (wakep), and the reply is one more.
//   - Here the deadline is a timerfd set to the absolute time of the next
//     PING, and the timerfd, an eventfd for commands and the probe sockets
//     sit in an epoll set of the loop's own. That epoll fd is the only
//     thing the loop registers with Go's netpoller: the goroutine parks
//     until the set is ready, and the thread that was sleeping in the
//     netpoller runs it, with no other thread woken. A thread of its own
//     blocked in epoll_pwait cost more: sysmon then never sleeps.
//   - The reply's arrival is the kernel's receive timestamp
//     (SO_TIMESTAMPNS), so the loop need not wake when it comes: a
//     connection whose replies carry one is taken out of the epoll set
//     ("deferred") and read at the next tick, with the round trip still
//     measured to the nanosecond of the reply's arrival, not to when the
//     loop got round to it. A connection without timestamps stays in the
//     set and is read, and timed, as soon as its reply comes.
//   - The sockets are not the netpoller's (they are duplicated from the
//     dialled net.Conn, which is then closed), and every call is raw and
//     non-blocking (syscall.RawSyscall): the goroutine never blocks in the
//     kernel or holds a P while waiting, so a stalled server delays no
//     other server's PINGs and the garbage collector never waits for the
//     loop.
//
// Every probe keeps its own schedule: its PINGs are due on a grid of its
// interval counted from probeEpoch and shifted by its phase (Phase: 0 at
// 2 ms, else its node's place in the interval, a multiple of 2 ms), so
// that a fleet's probes at rest are spread over the interval in groups
// that meet the saving node's 2 ms PINGs.
type probeLoop struct {
	epfd, tfd, efd int
	file           *os.File        // epfd, pollable: Go's netpoller wakes the loop
	rc             syscall.RawConn // of file
	waitFn         func(uintptr) bool
	monoOffset     int64 // CLOCK_MONOTONIC minus Now, for the timerfd

	mu      sync.Mutex // guards refs, adds, removes, syncs, quit, closed
	refs    int
	adds    []*loopConn
	removes []*loopConn
	syncs   []*loopConn
	retimes []*loopConn // whose probe's interval changed
	quit    bool
	closed  bool

	// Owned by the loop goroutine.
	conns  []*loopConn
	byFD   map[int32]*loopConn
	events [64]unix.EpollEvent
	nev    int
	armed  int64 // Now the timerfd fires next, 0 when disarmed
	period int64 // the timerfd's period, 0 when it is one-shot
	buf    [128]byte
	cmsg   [64]byte
	iov    unix.Iovec
	msg    unix.Msghdr
}

// loopConn is one probe connection served by the loop.
type loopConn struct {
	l        *probeLoop
	p        *Probe
	fd       int
	interval int64
	phase    int64 // the probe's place in each interval (Phase)
	next     int64 // Now when the next PING is due
	sent     int64 // Now of the PING in flight, 0 when none
	sentWall int64 // the same on the wall clock, for the kernel's timestamp
	stall    stall // OnStall's calls for the PING in flight
	// answered is when the last reply arrived (Now): a PING due before
	// it could not be sent, so its lateness counts from then.
	answered int64
	active   bool
	// deferred: replies carry kernel timestamps and are read at the next
	// tick. Written by the loop only; atomic so that tests can look.
	deferred atomic.Bool
	// done receives the one reason the loop let the connection go.
	done chan error
	// synced is signalled when a sync request has been served.
	synced chan struct{}
}

// defaultLoop is the process's shared loop, created by the first probe
// that needs it and closed when the last one leaves.
var defaultLoop struct {
	mu sync.Mutex
	l  *probeLoop
}

// acquireLoop returns the shared loop, starting it if needed; release it
// with release.
func acquireLoop() (*probeLoop, error) {
	defaultLoop.mu.Lock()
	defer defaultLoop.mu.Unlock()
	if defaultLoop.l == nil {
		l, err := newProbeLoop()
		if err != nil {
			return nil, err
		}
		defaultLoop.l = l
		go l.run()
	}
	l := defaultLoop.l
	l.mu.Lock()
	l.refs++
	l.mu.Unlock()
	return l, nil
}

// release drops one reference; the last one stops the loop.
func (l *probeLoop) release() {
	defaultLoop.mu.Lock()
	defer defaultLoop.mu.Unlock()
	l.mu.Lock()
	l.refs--
	last := l.refs == 0
	if last {
		l.quit = true
	}
	l.mu.Unlock()
	if last {
		if defaultLoop.l == l {
			defaultLoop.l = nil
		}
		l.wake()
	}
}

func newProbeLoop() (l *probeLoop, err error) {
	l = &probeLoop{epfd: -1, tfd: -1, efd: -1, byFD: map[int32]*loopConn{}}
	defer func() {
		if err != nil {
			l.closeFDs()
		}
	}()
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK); err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	if l.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	for _, fd := range []int{l.tfd, l.efd} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return nil, os.NewSyscallError("epoll_ctl", err)
		}
	}
	// Non-blocking, so that os.NewFile hands the epoll fd to the netpoller.
	if err = unix.SetNonblock(l.epfd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	var ts unix.Timespec
	if err = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return nil, os.NewSyscallError("clock_gettime", err)
	}
	l.monoOffset = ts.Nano() - Now()

	l.file = os.NewFile(uintptr(l.epfd), "probe-epoll")
	if l.rc, err = l.file.SyscallConn(); err != nil {
		return nil, err
	}
	l.waitFn = l.poll
	l.iov.Base = &l.buf[0]
	l.iov.SetLen(len(l.buf))
	l.msg.Iov = &l.iov
	l.msg.SetIovlen(1)
	l.msg.Control = &l.cmsg[0]
	return l, nil
}

func (l *probeLoop) closeFDs() {
	for _, fd := range []int{l.tfd, l.efd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	if l.file != nil {
		l.file.Close()
	} else if l.epfd >= 0 {
		unix.Close(l.epfd)
	}
}

// serveShared hands a plain TCP or unix connection to the shared loop and
// waits until the loop lets it go (err says why) or ctx is done. served is
// false when the connection cannot be served there (TLS, or no loop): the
// caller still owns conn then.
func serveShared(ctx context.Context, p *Probe, conn net.Conn) (served bool, err error) {
	switch conn.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return false, nil
	}
	l, err := acquireLoop()
	if err != nil {
		return false, nil
	}
	defer l.release()
	fd, err := detachFD(conn)
	if err != nil {
		return true, err
	}
	c := &loopConn{l: l, p: p, fd: fd, interval: max(int64(p.ivl.Get()), 1),
		done: make(chan error, 1), synced: make(chan struct{}, 1)}
	l.command(&l.adds, c)
	p.shared.Store(c)
	defer p.shared.Store(nil)
	select {
	case err := <-c.done:
		return true, err
	case <-ctx.Done():
	}
	l.command(&l.removes, c)
	<-c.done
	return true, ctx.Err()
}

// command queues c on one of the loop's request lists and wakes the loop;
// false when the loop has already stopped.
func (l *probeLoop) command(list *[]*loopConn, c *loopConn) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	*list = append(*list, c)
	l.mu.Unlock()
	l.wake()
	return true
}

// sync has the loop read c's reply if one has arrived, so that the state
// seen next (answered, sentAt, the histogram) is up to date: a deferred
// reply is otherwise read only at the next tick. It returns at once if the
// connection is gone.
func (c *loopConn) sync() {
	if c.l.command(&c.l.syncs, c) {
		<-c.synced
	}
}

// retime has the loop take c's probe's new interval.
func (c *loopConn) retime() { c.l.command(&c.l.retimes, c) }

// detachFD duplicates conn's socket, closes conn (which takes the socket
// out of Go's netpoller) and turns on kernel receive timestamps. The
// duplicate shares the socket's non-blocking mode.
func detachFD(conn net.Conn) (int, error) {
	defer conn.Close()
	rc, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, os.NewSyscallError("fcntl", derr)
	}
	// Without timestamps the connection stays watched and each reply is
	// timed when it is read.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	return fd, nil
}

// wake interrupts the loop's wait so that it reads its requests.
func (l *probeLoop) wake() {
	one := uint64(1)
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(l.efd), uintptr(unsafe.Pointer(&one)), 8)
		if e != syscall.EINTR {
			return
		}
	}
}

// poll is the loop's wait, run by RawConn.Read: it collects the ready
// events without blocking, and reports false (park on the netpoller) when
// there are none.
func (l *probeLoop) poll(fd uintptr) bool {
	n, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&l.events[0])),
		uintptr(len(l.events)), 0, 0, 0)
	if e != 0 {
		l.nev = 0
		return false
	}
	l.nev = int(n)
	return n > 0
}

// run is the loop: wait, read what came, send what is due, set the timer.
func (l *probeLoop) run() {
	for {
		if err := l.rc.Read(l.waitFn); err != nil {
			// Only Close ends the wait, and only run closes.
			return
		}
		for i := 0; i < l.nev; i++ {
			ev := &l.events[i]
			switch int(ev.Fd) {
			case l.tfd:
				if n := l.drainCounter(l.tfd); l.period > 0 {
					l.armed += int64(n) * l.period
				} else {
					l.armed = 0
				}
			case l.efd:
				l.drainCounter(l.efd)
				if l.requests() {
					l.shutdown()
					return
				}
			default:
				if c := l.byFD[ev.Fd]; c != nil && c.active {
					l.receive(c)
				}
			}
		}
		l.nev = 0
		l.tick(Now())
	}
}

// drainCounter reads and returns a timerfd's or eventfd's 8-byte counter.
func (l *probeLoop) drainCounter(fd int) uint64 {
	var v uint64
	syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&v)), 8)
	return v
}

// requests serves the connections added, removed and to be synced; it
// reports whether the loop is to stop.
func (l *probeLoop) requests() bool {
	l.mu.Lock()
	adds, removes, syncs, retimes, quit := l.adds, l.removes, l.syncs, l.retimes, l.quit
	l.adds, l.removes, l.syncs, l.retimes = nil, nil, nil, nil
	l.closed = quit
	l.mu.Unlock()
	now := Now()
	for _, c := range adds {
		// Watched for replies until one shows it carries a timestamp.
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd)}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			unix.Close(c.fd)
			c.done <- os.NewSyscallError("epoll_ctl", err)
			continue
		}
		c.active = true
		c.phase = Phase(c.p.spread, time.Duration(c.interval))
		// The first PING is due now, the next ones on the probe's grid.
		c.next = now
		l.conns = append(l.conns, c)
		l.byFD[int32(c.fd)] = c
	}
	for _, c := range retimes {
		// The new interval's grid from now: a shorter one brings the
		// next PING forward, a longer one waits for the PING already due.
		c.interval = max(int64(c.p.ivl.Get()), 1)
		c.phase = Phase(c.p.spread, time.Duration(c.interval))
		if g := gridAfter(now, c.interval, c.phase); g < c.next {
			c.next = g
		}
	}
	for _, c := range syncs {
		if c.active && c.sent != 0 {
			l.receive(c)
		}
		c.synced <- struct{}{}
	}
	for _, c := range removes {
		l.drop(c, nil)
	}
	l.compact()
	return quit
}

// shutdown lets every connection go and closes the loop's descriptors.
func (l *probeLoop) shutdown() {
	for _, c := range l.conns {
		l.drop(c, errors.New("probe loop stopped"))
	}
	l.conns = nil
	l.closeFDs()
}

// drop closes c's socket and tells its probe why; only the first call for
// a connection counts. The caller compacts l.conns.
func (l *probeLoop) drop(c *loopConn, err error) {
	if !c.active {
		return
	}
	c.active = false
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	delete(l.byFD, int32(c.fd))
	unix.Close(c.fd)
	c.p.sentAt.Store(0)
	c.sent = 0
	c.done <- err
}

// compact removes the connections dropped from l.conns.
func (l *probeLoop) compact() {
	kept := l.conns[:0]
	for _, c := range l.conns {
		if c.active {
			kept = append(kept, c)
		}
	}
	clear(l.conns[len(kept):])
	l.conns = kept
}

// receive reads what has arrived on c: the reply to its PING is one line
// (+PONG, or an error such as -LOADING). A connection that fails is
// dropped; the caller compacts.
func (l *probeLoop) receive(c *loopConn) {
	for {
		l.msg.SetControllen(len(l.cmsg))
		n, _, e := syscall.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&l.msg)), 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return
		case e != 0:
			l.drop(c, os.NewSyscallError("read", e))
			return
		case n == 0:
			l.drop(c, errors.New("connection closed by server"))
			return
		}
		if c.sent == 0 || l.buf[n-1] != '\n' {
			// The first part of a reply split in two, or bytes nobody
			// asked for: read on.
			continue
		}
		end := Now()
		rtt := end - c.sent
		stamped := false
		// The kernel's timestamp is on the wall clock; it is used when it
		// is consistent with the monotonic round trip (a clock step
		// between the two readings would make it negative or longer).
		if rx := l.rxTime(); rx > 0 {
			if k := rx - c.sentWall; k > 0 && k <= rtt {
				rtt, stamped = k, true
			}
		}
		l.setDeferred(c, stamped)
		sent := c.sent
		c.answered = sent + rtt
		c.sent = 0
		c.p.sentAt.Store(0)
		c.p.answered.Add(1)
		c.p.record(time.Duration(rtt), sent, stamped)
		// The next PING stays due one interval after this one was due. A
		// reply that came after that (an overrun) leaves it due: the next
		// tick sends it at once, as the goroutine probe does, and send
		// puts the one after back on the grid; the PINGs missed are
		// counted by the correction in record.
		return
	}
}

// setDeferred takes c out of the epoll set once its replies carry
// timestamps, and puts it back if they stop; a reply then still wakes the
// loop when the server closes the connection (EPOLLRDHUP).
func (l *probeLoop) setDeferred(c *loopConn, on bool) {
	if c.deferred.Load() == on {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLRDHUP, Fd: int32(c.fd)}
	if !on {
		ev.Events |= unix.EPOLLIN
	}
	if unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev) == nil {
		c.deferred.Store(on)
	}
}

// rxTime is the SO_TIMESTAMPNS control message of the last recvmsg, in ns
// on the wall clock, or 0 when there is none.
func (l *probeLoop) rxTime() int64 {
	hdrLen := unix.CmsgLen(0)
	for off := 0; off+hdrLen <= int(l.msg.Controllen); {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&l.cmsg[off]))
		if int(h.Len) < hdrLen || off+int(h.Len) > int(l.msg.Controllen) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS &&
			int(h.Len) >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&l.cmsg[off+hdrLen]))
			return ts.Nano()
		}
		off += unix.CmsgSpace(int(h.Len) - hdrLen)
	}
	return 0
}

// tick reads the deferred replies, sends the PINGs that are due, gives up
// on connections whose PING went unanswered for probeReadTimeout, and sets
// the timer to the next thing to do.
func (l *probeLoop) tick(now int64) {
	next := int64(-1)
	soonest := func(t int64) {
		if next < 0 || t < next {
			next = t
		}
	}
	// When every connection has the same interval and phase the timer is
	// periodic and, while all is well, never needs setting again.
	period, phase := int64(0), int64(0)
	for _, c := range l.conns {
		if period == 0 {
			period, phase = c.interval, c.phase
		} else if c.interval != period || c.phase != phase {
			period = -1
		}
	}
	for _, c := range l.conns {
		if c.active && c.sent != 0 && c.deferred.Load() {
			l.receive(c)
		}
		if c.active && c.sent == 0 && c.next <= now {
			l.send(c, now)
		}
		switch {
		case !c.active:
		case c.sent != 0 && now-c.sent >= int64(probeReadTimeout):
			l.drop(c, errors.New("no answer to PING for "+probeReadTimeout.String()))
		case c.sent != 0:
			c.stall.check(c.p, c.sent, now)
			// A deferred reply is looked for at the probe's next grid
			// point; a watched one wakes the loop itself, but the timer
			// keeps its period all the same (setting it costs more than
			// a tick that finds nothing to do while a server stalls).
			soonest(c.sent + int64(probeReadTimeout))
			soonest(gridAfter(now, c.interval, c.phase))
		default:
			soonest(c.next)
		}
	}
	l.compact()
	l.arm(next, max(period, 0))
}

// send writes c's PING, due at c.next, at now.
func (l *probeLoop) send(c *loopConn, now int64) {
	t := time.Now()
	c.sent = max(int64(t.Sub(probeEpoch)), 1)
	c.sentWall = t.UnixNano()
	c.p.sentAt.Store(c.sent)
	c.p.noteLate(max(c.next, c.answered), c.sent)
	c.stall.begin(c.p)
	// The next is due at the grid point after this one was due (one
	// interval later once on the grid); when the loop itself was late by
	// more than an interval, at the first grid point after now.
	c.next = gridAfter(c.next, c.interval, c.phase)
	if c.next <= now {
		c.next = gridAfter(now, c.interval, c.phase)
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&pingCmd[0])), uintptr(len(pingCmd)))
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			l.drop(c, os.NewSyscallError("write", e))
		case int(n) != len(pingCmd):
			// One PING in flight never fills a socket buffer.
			l.drop(c, errors.New("short write of PING"))
		}
		return
	}
}

// arm sets the timerfd to fire at Now t, then every period if that is
// not 0; it disarms the timer when t < 0.
func (l *probeLoop) arm(t, period int64) {
	if (t == l.armed && period == l.period) || (t < 0 && l.armed == 0) {
		return
	}
	var spec unix.ItimerSpec
	l.armed, l.period = 0, 0
	if t >= 0 {
		spec.Value = unix.NsecToTimespec(t + l.monoOffset)
		spec.Interval = unix.NsecToTimespec(period)
		l.armed, l.period = t, period
	}
	syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(l.tfd), unix.TFD_TIMER_ABSTIME,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

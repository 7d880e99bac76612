package procmem

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// userHZ is the unit of /proc's CPU times (clock ticks, sysconf(_SC_CLK_TCK)):
// 100 on every Linux vkwatch runs on, as procfs assumes too.
const userHZ = 100

// psiEvery is how long one read of the host's pressure stall totals serves
// every server on the host: the samplers of a fleet wake together, so they
// read /proc/pressure once between them; a spike's window is hundreds of
// milliseconds, so a total this much older costs it little.
const psiEvery = 50 * time.Millisecond

// Sched reads what the kernel says of server pid's main thread (the thread
// whose id is the process's: a Valkey or Redis server runs its event loop
// and every command there), for explaining a PING spike: its state, its
// time on a CPU and waiting for one (schedstat), its page faults and time
// in the kernel (stat), the host's pressure stall totals, and with wchan
// where in the kernel it sleeps. at is stamped on the reading. Every field
// that cannot be read is absent. A read is three or four small files,
// without allocating but for the wait channel's name.
func (r *Reader) Sched(pid int64, at time.Duration, wchan bool) source.ProcSched {
	s := source.ProcSched{At: at}
	if pid <= 0 {
		return s
	}
	var buf [1024]byte
	dir := filepath.Join(r.mount, strconv.FormatInt(pid, 10), "task", strconv.FormatInt(pid, 10))
	if b, ok := readSmall(filepath.Join(dir, "stat"), buf[:]); ok {
		parseTaskStat(b, &s)
	}
	if b, ok := readSmall(filepath.Join(dir, "schedstat"), buf[:]); ok {
		if f := bytes.Fields(b); len(f) >= 2 {
			if v, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil && v >= 0 {
				s.OnCPU = source.Some(time.Duration(v))
			}
			if v, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil && v >= 0 {
				s.RunDelay = source.Some(time.Duration(v))
			}
		}
	}
	if wchan {
		if b, ok := readSmall(filepath.Join(dir, "wchan"), buf[:]); ok && len(b) <= 64 {
			s.WaitChan = string(bytes.TrimSpace(b))
		}
	}
	s.CPUPressure, s.MemPressure, s.IOPressure = r.pressure()
	return s
}

// parseTaskStat reads a task's stat line: "pid (comm) state ..." where
// comm may hold spaces and parentheses, so the fields are counted from
// the last ')'.
func parseTaskStat(b []byte, s *source.ProcSched) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 13 {
		return
	}
	if len(f[0]) == 1 {
		s.State = state(f[0][0])
	}
	num := func(n int) (int64, bool) {
		v, err := strconv.ParseInt(string(f[n-3]), 10, 64)
		return v, err == nil && v >= 0
	}
	if v, ok := num(10); ok {
		s.MinFlt = source.Some(v)
	}
	if v, ok := num(12); ok {
		s.MajFlt = source.Some(v)
	}
	if v, ok := num(15); ok {
		s.STime = source.Some(time.Duration(v) * time.Second / userHZ)
	}
}

// state returns the state letter as a constant string (no allocation).
func state(c byte) string {
	const letters = "RSDTtZXIPWK"
	if i := strings.IndexByte(letters, c); i >= 0 {
		return letters[i : i+1]
	}
	return "?"
}

// readSmall reads a small /proc file whole into buf; false when it cannot
// be read or does not fit.
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			return buf[:n], true
		}
		n += m
	}
	return nil, false
}

// pressure is the host's "some" stall totals for CPU, memory and I/O,
// read again once psiEvery has passed; absent where the kernel has no
// pressure stall information (before 4.20, or turned off).
func (r *Reader) pressure() (cpu, mem, io source.Opt[time.Duration]) {
	now := r.now()
	r.psiMu.Lock()
	defer r.psiMu.Unlock()
	if !r.psiAt.IsZero() && fresh(r.psiAt, now, psiEvery) {
		return r.psi[0], r.psi[1], r.psi[2]
	}
	r.psiAt = now
	var buf [256]byte
	for i, name := range [...]string{"cpu", "memory", "io"} {
		r.psi[i] = source.Opt[time.Duration]{}
		if b, ok := readSmall(filepath.Join(r.mount, "pressure", name), buf[:]); ok {
			r.psi[i] = someTotal(b)
		}
	}
	return r.psi[0], r.psi[1], r.psi[2]
}

// someTotal reads total= (µs) of a pressure file's "some" line:
// "some avg10=0.00 avg60=0.00 avg300=0.00 total=288076125".
func someTotal(b []byte) source.Opt[time.Duration] {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("some ")) {
		return source.Opt[time.Duration]{}
	}
	_, v, ok := bytes.Cut(line, []byte("total="))
	if !ok {
		return source.Opt[time.Duration]{}
	}
	us, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil || us < 0 {
		return source.Opt[time.Duration]{}
	}
	return source.Some(time.Duration(us) * time.Microsecond)
}

// Package procmem reads the memory of a local Valkey or Redis server, and of
// its save child, from /proc: a second instrument beside the server's own
// INFO figures. The seed experiment trusted its copy-on-write number only
// because two unrelated instruments agreed; rdb_last_cow_size comes from the
// server, the child's Private_Dirty here comes from the kernel.
//
// Read is cheap enough for five calls a second: it reads stat, the save
// child's smaps_rollup (the kernel sums the mappings), never the full
// smaps, the server's own smaps_rollup at most once a second, and the two
// memory files of the server's cgroup (cgroup.go).
package procmem

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/vkwatch/vkwatch/source"
)

// Reader reads the memory of a local server process, of its save child and
// of its memory cgroup. Between calls it keeps the cgroup mounts (read
// once) and the readings it repeats for a while rather than read at every
// call: each server's PSS and cgroup place and limit, and the host's
// MemAvailable. It is safe for concurrent use.
type Reader struct {
	mount  string
	fs     procfs.FS
	rollup bool // smaps_rollup exists (Linux 4.15+)

	mountsOnce sync.Once
	mounts     cgroupMounts

	now         func() time.Time // time.Now; tests move it
	pssMu       sync.Mutex
	pss         map[int]pssReading // the server's last smaps_rollup PSS, by pid
	cgMu        sync.Mutex
	cgroups     map[int]cgroupPlace // where each process's memory cgroup is, by pid
	memMu       sync.Mutex
	memAt       time.Time // when /proc/meminfo was last read
	memAvl      source.Opt[int64]
	memBuf      [4096]byte // /proc/meminfo, read under memMu
	usageMu     sync.Mutex
	usage       map[string]usageReading // each cgroup's last usage, by file
	thpMu       sync.Mutex
	thp         map[int]thpReading // each server's THP, by pid
	thpKernel   string             // the kernel's setting, for every server
	thpKernelAt time.Time          // when it was read
	psiMu       sync.Mutex
	psiAt       time.Time                    // when /proc/pressure was last read
	psi         [3]source.Opt[time.Duration] // its cpu, memory and io totals
}

// hostMemEvery is how long one read of the host's MemAvailable serves
// every server on the host: half the default --interval, so the servers of
// a fleet sampled together read /proc/meminfo once between them.
const hostMemEvery = 100 * time.Millisecond

// serverPSSEvery is how often the server's own smaps_rollup is read; in
// between, Read returns the last PSS. The kernel walks every page table
// entry of the process to sum it, holding the process's mmap lock: 12.5 ms
// of system time for a 1.1 GiB server on the build machine, so five reads
// a second cost 6% of a core per watched server, and the server's own
// mmap and munmap calls wait meanwhile. The server's PSS moves slowly and
// is shown nowhere but in recordings; the save child's smaps_rollup, whose
// Private_Dirty is the copy-on-write instrument, is still read every time.
const serverPSSEvery = time.Second

// pssPerSecond is how many servers' smaps_rollup one Reader reads a
// second at most: past that many servers each is read less often than
// serverPSSEvery (a hundred servers: every 10 s each), so that a fleet's
// PSS, shown nowhere but in recordings, does not cost a fifth of the
// process's CPU.
const pssPerSecond = 10

// pssEvery is how often each of n servers' PSS is read.
func pssEvery(n int) time.Duration {
	return serverPSSEvery * time.Duration(max(1, (n+pssPerSecond-1)/pssPerSecond))
}

// pssReading is one read of a server's PSS.
type pssReading struct {
	at  time.Time
	pss int64
}

// New returns a Reader of /proc, or an error when /proc is not available
// (not Linux, or not mounted).
func New() (*Reader, error) { return newAt(procfs.DefaultMountPoint) }

// NewAt is New for a proc filesystem mounted at mount: a host's /proc
// mounted elsewhere (a container watching its host), or a test's tree.
func NewAt(mount string) (*Reader, error) { return newAt(mount) }

func newAt(mount string) (*Reader, error) {
	// procfs.NewFS only checks that the directory exists; ask for a file
	// that only a real proc filesystem has.
	if _, err := os.Stat(filepath.Join(mount, "self", "stat")); err != nil {
		return nil, fmt.Errorf("procmem: %s is not a proc filesystem: %w", mount, err)
	}
	fs, err := procfs.NewFS(mount)
	if err != nil {
		return nil, fmt.Errorf("procmem: %w", err)
	}
	_, err = os.Stat(filepath.Join(mount, "self", "smaps_rollup"))
	return &Reader{mount: mount, fs: fs, rollup: err == nil, now: time.Now,
		pss: map[int]pssReading{}, cgroups: map[int]cgroupPlace{}, usage: map[string]usageReading{}, thp: map[int]thpReading{}}, nil
}

// Read returns the RSS and PSS of process pid, the host's MemAvailable, its
// memory cgroup's usage and limit and, while it has one, the PID,
// Private_Dirty and PSS of its save child. Every field that cannot be read
// (no such process, no permission, an old kernel, no memory cgroup) is
// absent.
//
// The child's Private_Dirty is its copy-on-write cost: a page the server
// writes after the fork is copied for the server, and the original stays
// with the child alone, counted as its private dirty memory.
func (r *Reader) Read(pid int64) source.ProcMem {
	var m source.ProcMem
	if pid <= 0 {
		return m
	}
	p, err := r.fs.Proc(int(pid))
	if err != nil {
		return m
	}
	rss, ok := r.rss(p.PID)
	if !ok {
		return m
	}
	m.RSS = source.Some(rss)
	m.HostMemAvailable = r.hostMemAvailable()
	if pss, ok := r.serverPSS(p); ok {
		m.PSS = source.Some(pss)
	}
	if cg, ok := r.cgroupOf(p.PID); ok {
		m.Cgroup, m.CgroupUsage = cg.name, source.Some(cg.usage)
		if cg.limit >= 0 {
			m.CgroupLimit = source.Some(cg.limit)
		}
	}
	thp := r.thpOf(p.PID)
	m.THPKernel, m.AnonHugePages = thp.Kernel, thp.AnonHuge
	child, ok := r.saveChild(p)
	if !ok {
		return m
	}
	m.ChildPID = source.Some(int64(child.PID))
	if sm, ok := r.smapsRollup(child); ok {
		m.ChildPrivateDirty = source.Some(int64(sm.PrivateDirty))
		m.ChildPSS = source.Some(int64(sm.Pss))
	}
	return m
}

// fresh reports whether a reading taken at `at` still serves at now: less
// than every ago, and not in the future (a clock that stepped back).
func fresh(at, now time.Time, every time.Duration) bool {
	d := now.Sub(at)
	return d >= 0 && d < every
}

// hostMemAvailable is the host's MemAvailable, read again once
// hostMemEvery has passed. The process is on this host, so /proc/meminfo is
// its host's. In a container it is still the whole machine's, not the
// cgroup's limit.
func (r *Reader) hostMemAvailable() source.Opt[int64] {
	now := r.now()
	r.memMu.Lock()
	defer r.memMu.Unlock()
	if !r.memAt.IsZero() && fresh(r.memAt, now, hostMemEvery) {
		return r.memAvl
	}
	r.memAt, r.memAvl = now, source.Opt[int64]{}
	if v, ok := r.readMemAvailable(); ok {
		r.memAvl = source.Some(v)
	}
	return r.memAvl
}

// readMemAvailable reads MemAvailable from /proc/meminfo into the Reader's
// buffer and looks for that line alone: procfs's Meminfo parses all fifty
// of them into a struct, 72 µs and 176 allocations a read on the build
// machine against 17 µs and one, at every sample of a local server. The
// caller holds memMu.
func (r *Reader) readMemAvailable() (int64, bool) {
	fd, err := syscall.Open(filepath.Join(r.mount, "meminfo"), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(r.memBuf) {
		m, err := syscall.Read(fd, r.memBuf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return parseMemAvailable(r.memBuf[:n])
}

// parseMemAvailable finds the "MemAvailable: N kB" line of a meminfo file
// and returns N in bytes.
func parseMemAvailable(b []byte) (int64, bool) {
	const key = "MemAvailable:"
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 || len(f) > 2 || (len(f) == 2 && string(f[1]) != "kB") {
			return 0, false
		}
		v, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || v < 0 || v > math.MaxInt64>>10 {
			return 0, false
		}
		if len(f) == 2 {
			v <<= 10
		}
		return v, true
	}
	return 0, false
}

// serverPSS is the server's PSS, read again once serverPSSEvery has passed
// since the last read of the same process.
func (r *Reader) serverPSS(p procfs.Proc) (int64, bool) {
	now := r.now()
	r.pssMu.Lock()
	last, ok := r.pss[p.PID]
	every := pssEvery(len(r.pss))
	r.pssMu.Unlock()
	if ok && fresh(last.at, now, every) {
		return last.pss, true
	}
	sm, ok := r.smapsRollup(p)
	r.pssMu.Lock()
	defer r.pssMu.Unlock()
	// Forget the processes no longer read (a restarted server, a fleet
	// that changed).
	for pid, v := range r.pss {
		if now.Sub(v.at) > 10*every {
			delete(r.pss, pid)
		}
	}
	if !ok {
		delete(r.pss, p.PID)
		return 0, false
	}
	r.pss[p.PID] = pssReading{at: now, pss: int64(sm.Pss)}
	return int64(sm.Pss), true
}

// smapsRollup reads smaps_rollup, never the full smaps: procfs would fall
// back to summing smaps on kernels without smaps_rollup, which costs
// milliseconds on a large server and is not worth it five times a second.
func (r *Reader) smapsRollup(p procfs.Proc) (procfs.ProcSMapsRollup, bool) {
	if !r.rollup {
		return procfs.ProcSMapsRollup{}, false
	}
	sm, err := p.ProcSMapsRollup()
	return sm, err == nil
}

// rss reads the resident set of pid from statm: the counter stat's rss
// field shows too, from a file of seven numbers rather than stat's 52
// fields (which procfs parses with fmt.Fscan, a quarter of what reading
// /proc cost at each sample).
func (r *Reader) rss(pid int) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(r.mount, strconv.Itoa(pid), "statm"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || pages < 0 {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// saveChild finds the save child of the server p. The kernel lists each thread's children in task/<tid>/children; a
// kernel built without that file (or a process that ended meanwhile) is
// served by scanning every process's parent.
func (r *Reader) saveChild(p procfs.Proc) (procfs.Proc, bool) {
	pids, err := r.children(p.PID)
	if err != nil {
		pids = r.childrenByScan(p.PID)
	}
	if len(pids) == 0 {
		return procfs.Proc{}, false
	}
	comm, _ := p.Comm() // "" matches no child: titles decide
	for _, cpid := range pids {
		c, err := r.fs.Proc(cpid)
		if err != nil {
			continue // it ended meanwhile
		}
		if isSaveChild(c, comm) {
			return c, true
		}
	}
	return procfs.Proc{}, false
}

// children returns the child PIDs of pid's main thread. Valkey and Redis
// fork in their main thread (the event loop runs every BGSAVE, AOF rewrite,
// replica full sync and module fork), and the kernel lists a child in the
// children file of the thread that forked it, so the main thread's file is
// the one to read: one file at each Read instead of the task directory and
// a file per thread (five to ten on a server), a third of what reading
// /proc cost at each sample. A fork from another thread (a module calling
// RM_Fork from a thread of its own) is not seen.
func (r *Reader) children(pid int) ([]int, error) {
	id := strconv.Itoa(pid)
	b, err := os.ReadFile(filepath.Join(r.mount, id, "task", id, "children"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids, nil
}

// childrenByScan finds the children of pid by reading every process's
// parent: the slow way, for kernels without task/*/children.
func (r *Reader) childrenByScan(pid int) []int {
	procs, err := r.fs.AllProcs()
	if err != nil {
		return nil
	}
	var pids []int
	for _, c := range procs {
		if st, err := c.Stat(); err == nil && st.PPID == pid {
			pids = append(pids, c.PID)
		}
	}
	return pids
}

// isSaveChild tells whether c is the server's RDB or AOF child. The server
// renames its child's argv to "redis-rdb-bgsave", "redis-aof-rewrite",
// "valkey-rdb-bgsave", "redis-rdb-to-slaves" and the like, but keeps its
// command name (comm). A child with the server's own comm is a fork that did
// not exec anything else: a save child even before it renamed itself, or
// when set-proc-title is off.
func isSaveChild(c procfs.Proc, serverComm string) bool {
	if args, err := c.CmdLine(); err == nil && len(args) > 0 && len(strings.Fields(args[0])) > 0 {
		title := filepath.Base(strings.Fields(args[0])[0])
		if (strings.HasPrefix(title, "redis-") || strings.HasPrefix(title, "valkey-")) &&
			(strings.Contains(title, "-rdb-") || strings.Contains(title, "-aof-")) {
			return true
		}
	}
	comm, err := c.Comm()
	return err == nil && serverComm != "" && comm == serverComm
}

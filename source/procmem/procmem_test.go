package procmem

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

func newReader(t testing.TB) *Reader {
	t.Helper()
	r, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// kernelChildren lists the children of pid straight from the kernel, to
// check the Reader against.
func kernelChildren(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// hostMemTotal reads MemTotal from /proc/meminfo without procfs.
func hostMemTotal(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n * 1024
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

func TestNewFailsWithoutProc(t *testing.T) {
	if _, err := newAt(t.TempDir()); err == nil {
		t.Fatal("a plain directory was taken for /proc")
	}
}

func TestReadMissingProcessIsAbsent(t *testing.T) {
	r := newReader(t)
	s := servertest.StartDefault(t)
	pid := s.PID()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if m := r.Read(int64(pid)); m.RSS.OK || m.PSS.OK || m.ChildPID.OK || m.ChildPrivateDirty.OK || m.ChildPSS.OK || m.HostMemAvailable.OK {
		t.Fatalf("read of an ended process gave %+v, want all absent", m)
	}
	if m := r.Read(0); m.RSS.OK {
		t.Fatalf("read of pid 0 gave %+v", m)
	}
}

func TestRSSAgreesWithInfo(t *testing.T) {
	r := newReader(t)
	s, c := servertest.StartWithClient(t)
	servertest.Populate(t, c, 100000, "key", 300)
	// used_memory_rss is refreshed by the server about every 100 ms: poll
	// until both instruments see the same memory, within 5%.
	var ours, theirs int64
	servertest.WaitFor(t, 20*time.Second, "RSS to agree with used_memory_rss", func() bool {
		m := r.Read(int64(s.PID()))
		if !m.RSS.OK || !m.PSS.OK {
			t.Fatalf("RSS or PSS absent for a local server: %+v", m)
		}
		ours, theirs = m.RSS.V, servertest.InfoInt(t, c, "memory", "used_memory_rss")
		d := ours - theirs
		return d*20 < theirs && -d*20 < theirs
	})
	if ours < 30<<20 {
		t.Fatalf("RSS %d bytes is too small for 100000 keys of 300 bytes", ours)
	}
	m := r.Read(int64(s.PID()))
	total := hostMemTotal(t)
	if !m.HostMemAvailable.OK || m.HostMemAvailable.V <= 0 || m.HostMemAvailable.V > total {
		t.Fatalf("HostMemAvailable %+v, want present and within MemTotal %d", m.HostMemAvailable, total)
	}
	if m := r.Read(int64(s.PID())); m.ChildPID.OK || m.ChildPrivateDirty.OK || m.ChildPSS.OK {
		t.Fatalf("child reported with no save running: %+v", m)
	}
}

func TestSaveChildLifecycle(t *testing.T) {
	r := newReader(t)
	// 200000 keys x 20 us: a save of about 4 s.
	const keys = 200000
	s, c := servertest.StartSlowSave(t, keys, 300, 20)
	ctx := context.Background()
	pid := s.PID()
	if m := r.Read(int64(pid)); !m.RSS.OK || m.ChildPID.OK {
		t.Fatalf("before the save: %+v, want RSS and no child", m)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Overwrite the populated keys while the child saves: every page the
	// server writes stays with the child as private dirty memory.
	w, err := load.StartWriters(ctx, &redis.Options{Addr: s.Addr}, load.Config{Prefix: "key:", Keys: keys, Writers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	var child int64
	servertest.WaitFor(t, 20*time.Second, "the save child", func() bool {
		m := r.Read(int64(pid))
		if !m.ChildPID.OK {
			return false
		}
		child = m.ChildPID.V
		return true
	})
	if kids := kernelChildren(t, pid); len(kids) != 1 || kids[0] != strconv.FormatInt(child, 10) {
		t.Fatalf("reader says child %d, kernel says children %v", child, kids)
	}
	if servertest.InfoInt(t, c, "persistence", "rdb_bgsave_in_progress") != 1 {
		t.Fatal("the save ended before it could be watched; raise rdb-key-save-delay")
	}
	var dirty int64
	servertest.WaitFor(t, 20*time.Second, "the child's private dirty memory to grow", func() bool {
		m := r.Read(int64(pid))
		if !m.ChildPID.OK {
			t.Fatalf("the child vanished before its private dirty memory grew (writer ops %d, last error %v)", w.Ops(), w.LastError())
		}
		if m.ChildPID.V != child || !m.ChildPrivateDirty.OK || !m.ChildPSS.OK {
			t.Fatalf("during the save: %+v, want child %d with Private_Dirty and PSS", m, child)
		}
		dirty = m.ChildPrivateDirty.V
		return dirty > 1<<20
	})
	w.Stop()

	servertest.WaitFor(t, 60*time.Second, "the save to end", func() bool {
		return servertest.InfoInt(t, c, "persistence", "rdb_bgsave_in_progress") == 0
	})
	servertest.WaitFor(t, 20*time.Second, "the child process to be gone", func() bool {
		_, err := os.Stat(filepath.Join("/proc", strconv.FormatInt(child, 10)))
		return os.IsNotExist(err)
	})
	if m := r.Read(int64(pid)); !m.RSS.OK || m.ChildPID.OK || m.ChildPrivateDirty.OK || m.ChildPSS.OK {
		t.Fatalf("after the save: %+v, want RSS and no child", m)
	}
	// The server's own instrument saw copy-on-write too.
	if cow := servertest.InfoInt(t, c, "persistence", "rdb_last_cow_size"); cow <= 0 {
		t.Fatalf("server reported rdb_last_cow_size %d while /proc saw %d private dirty bytes", cow, dirty)
	}
}

func TestIsSaveChildByTitle(t *testing.T) {
	// The test binary itself is not a save child of a process named
	// differently, and is one of a process with its own comm.
	r := newReader(t)
	self, err := r.fs.Self()
	if err != nil {
		t.Fatal(err)
	}
	comm, err := self.Comm()
	if err != nil {
		t.Fatal(err)
	}
	if isSaveChild(self, "redis-server") {
		t.Fatalf("%s taken for a save child of redis-server", comm)
	}
	if !isSaveChild(self, comm) {
		t.Fatal("a fork with the server's own comm not taken for its child")
	}
}

func BenchmarkRead(b *testing.B) {
	r := newReader(b)
	s, c := servertest.StartSlowSave(b, 500000, 300, 100)
	ctx := context.Background()
	if err := c.BgSave(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	pid := int64(s.PID())
	for !r.Read(pid).ChildPID.OK {
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	b.ResetTimer()
	for b.Loop() {
		if m := r.Read(pid); !m.ChildPrivateDirty.OK {
			b.Fatalf("no child: %+v", m)
		}
	}
}

// BenchmarkReadIdle is what every sample of an idle local server costs:
// the read between the server's once-a-second smaps_rollup, with no child.
func BenchmarkReadIdle(b *testing.B) {
	r := newReader(b)
	s := servertest.StartDefault(b)
	pid := int64(s.PID())
	if m := r.Read(pid); !m.RSS.OK || !m.PSS.OK || m.ChildPID.OK {
		b.Fatalf("want RSS and PSS and no child: %+v", m)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Read(pid)
	}
}

// TestServerPSSAtMostOncePerSecond: the server's smaps_rollup, whose page
// walk costs milliseconds on a large server, is read again only once
// serverPSSEvery has passed; RSS is fresh at every Read.
func TestServerPSSAtMostOncePerSecond(t *testing.T) {
	r := newReader(t)
	now := time.Now()
	r.now = func() time.Time { return now }
	s, c := servertest.StartWithClient(t)
	pid := int64(s.PID())
	before := r.Read(pid)
	if !before.PSS.OK || !before.RSS.OK {
		t.Fatalf("PSS or RSS absent for a local server: %+v", before)
	}
	servertest.Populate(t, c, 100000, "key", 300)
	now = now.Add(serverPSSEvery - time.Millisecond)
	cached := r.Read(pid)
	if cached.PSS != before.PSS {
		t.Errorf("PSS read again within %s: %v, then %v", serverPSSEvery, before.PSS, cached.PSS)
	}
	if cached.RSS.V < before.RSS.V+20<<20 {
		t.Errorf("RSS %d after 100000 keys of 300 bytes, %d before: not read afresh", cached.RSS.V, before.RSS.V)
	}
	now = now.Add(time.Millisecond)
	fresh := r.Read(pid)
	if !fresh.PSS.OK || fresh.PSS.V < before.PSS.V+20<<20 {
		t.Errorf("PSS %v after %s, %v before: not read again", fresh.PSS, serverPSSEvery, before.PSS)
	}
}

func TestParseMemAvailable(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"MemTotal:       4000 kB\nMemFree:         100 kB\nMemAvailable:    2500 kB\nBuffers: 1 kB\n", 2500 << 10, true},
		{"MemAvailable: 7 kB", 7 << 10, true}, // first line, no newline
		{"MemAvailable: 4096\n", 4096, true},  // no unit: bytes, as procfs reads it
		{"MemTotal: 4000 kB\nMemFree: 100 kB\n", 0, false},
		{"MemAvailable: lots kB\n", 0, false},
		{"MemAvailable: -5 kB\n", 0, false},
		{"MemAvailable: 5 MB\n", 0, false},
		{"MemAvailable: 99999999999999999 kB\n", 0, false}, // overflows once in bytes
		{"XMemAvailable: 5 kB\n", 0, false},
		{"", 0, false},
	} {
		got, ok := parseMemAvailable([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseMemAvailable(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestMemAvailableMatchesProcfs reads this host's /proc/meminfo both ways:
// MemAvailable moves between the two reads, so they agree within 5% of
// MemTotal.
func TestMemAvailableMatchesProcfs(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	r.memMu.Lock()
	got, ok := r.readMemAvailable()
	r.memMu.Unlock()
	if !ok || got <= 0 {
		t.Fatalf("readMemAvailable = %d, %v; want a positive figure", got, ok)
	}
	mi, err := r.fs.Meminfo()
	if err != nil || mi.MemAvailableBytes == nil {
		t.Fatalf("procfs Meminfo: %v", err)
	}
	want := int64(*mi.MemAvailableBytes)
	if d := got - want; d > hostMemTotal(t)/20 || -d > hostMemTotal(t)/20 {
		t.Fatalf("MemAvailable %d, procfs says %d", got, want)
	}
}

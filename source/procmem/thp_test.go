package procmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// The kernel's setting cannot be changed here: a fake /proc and /sys
// stand for a host with huge pages [always] and a server they back. The
// reading is kept for thpEvery, then read again.
func TestTHPFromFakeHost(t *testing.T) {
	r, pid := fakeHost(t, nil, "", map[string]string{"kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n"})
	now := time.Now()
	r.now = func() time.Time { return now }
	dir := filepath.Join(r.mount, "4242")
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("statm", "2000 1000 100 1 0 900 0\n")
	rollup := func(kb string) string {
		return "55d0c0a00000-7ffd5b5fe000 ---p 00000000 00:00 0   [rollup]\nRss:  412344 kB\nPss:  411210 kB\nAnonHugePages:  " + kb + " kB\n"
	}
	write("smaps_rollup", rollup("266240"))
	m := r.Read(int64(pid))
	if !m.RSS.OK || m.THPKernel != "always" || m.AnonHugePages != source.Some[int64](266240<<10) {
		t.Fatalf("read %+v", m)
	}
	write("smaps_rollup", rollup("0"))
	now = now.Add(thpEvery - time.Millisecond)
	if got := r.Read(int64(pid)); got.AnonHugePages != m.AnonHugePages {
		t.Errorf("read again within %s: %+v", thpEvery, got.AnonHugePages)
	}
	now = now.Add(time.Millisecond)
	if got := r.Read(int64(pid)); got.AnonHugePages != source.Some[int64](0) {
		t.Errorf("not read again after %s: %+v", thpEvery, got.AnonHugePages)
	}
}

// A real server on this host: the kernel's setting as the file says it,
// and its AnonHugePages read (Redis turns huge pages off for itself by
// default: disable-thp yes).
func TestTHPRealServer(t *testing.T) {
	s := servertest.Start(t, server.Options{})
	m := newReader(t).Read(int64(s.PID()))
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Fatal(err)
	}
	if m.THPKernel == "" || !strings.Contains(string(b), "["+m.THPKernel+"]") {
		t.Errorf("THPKernel %q, the host's file %q", m.THPKernel, b)
	}
	if !m.AnonHugePages.OK {
		t.Errorf("AnonHugePages absent for a local server: %+v", m)
	}
}

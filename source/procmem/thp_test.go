package procmem

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
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
	s := servertest.StartDefault(t)
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

// TestTHPReadsCappedInAFleet: beyond thpPerEvery servers, each server's
// smaps_rollup is read for its huge pages less often, so that a fleet
// costs thpPerEvery reads a thpEvery in all, and the kernel's setting is
// read once for all of them.
func TestTHPReadsCappedInAFleet(t *testing.T) {
	r, _ := fakeHost(t, nil, "", map[string]string{"kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n"})
	now := time.Now()
	r.now = func() time.Time { return now }
	const n = 3 * thpPerEvery
	write := func(pid int, name, s string) {
		dir := filepath.Join(r.mount, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rollup := func(kb int) string {
		return "Rss:  412344 kB\nPss:  411210 kB\nAnonHugePages:  " + strconv.Itoa(kb) + " kB\n"
	}
	for i := range n {
		write(5000+i, "statm", "2000 1000 100 1 0 900 0\n")
		write(5000+i, "smaps_rollup", rollup(2048))
		if m := r.Read(int64(5000 + i)); m.AnonHugePages != source.Some[int64](2048<<10) || m.THPKernel != "always" {
			t.Fatalf("server %d: %+v", i, m)
		}
	}
	// Every file changes; after one thpEvery a fleet of 3 x thpPerEvery
	// still shows the old readings, and the new ones after three.
	for i := range n {
		write(5000+i, "smaps_rollup", rollup(0))
	}
	sys := filepath.Join(fakeSys(r), "kernel/mm/transparent_hugepage/enabled")
	if err := os.WriteFile(sys, []byte("always [madvise] never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now = now.Add(thpEvery)
	for i := range n {
		if m := r.Read(int64(5000 + i)); m.AnonHugePages != source.Some[int64](2048<<10) || m.THPKernel != "madvise" {
			t.Fatalf("after %s, server %d: AnonHugePages %+v (read again too soon?), kernel %q (one file, read every %s)", thpEvery, i, m.AnonHugePages, m.THPKernel, thpEvery)
		}
	}
	now = now.Add(2 * thpEvery)
	for i := range n {
		if m := r.Read(int64(5000 + i)); m.AnonHugePages != source.Some[int64](0) {
			t.Fatalf("after %s, server %d not read again: %+v", 3*thpEvery, i, m.AnonHugePages)
		}
	}
}

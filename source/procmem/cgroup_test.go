package procmem

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// expectedCgroupDir finds the memory cgroup directory of pid the plain way
// the kernel documentation describes, without mountinfo: a v1 line holding
// memory -> /sys/fs/cgroup/memory/PATH, else the v2 line -> /sys/fs/cgroup/PATH
// (or /sys/fs/cgroup/unified/PATH on a hybrid host). It is the reference
// the Reader's mountinfo-based resolution is checked against.
func expectedCgroupDir(t *testing.T, pid int) (dir, name string, v1 bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	var v2path string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			t.Fatalf("bad line %q in /proc/%d/cgroup", line, pid)
		}
		if f[0] == "0" && f[1] == "" {
			v2path = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", f[2]), "v1:" + f[2], true
			}
		}
	}
	if v2path == "" {
		t.Fatalf("/proc/%d/cgroup has neither a v1 memory line nor a v2 line:\n%s", pid, b)
	}
	for _, base := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		d := filepath.Join(base, v2path)
		if _, err := os.Stat(filepath.Join(d, "memory.current")); err == nil {
			return d, "v2:" + v2path, false
		}
	}
	t.Fatalf("no memory.current for the v2 cgroup %s of pid %d under /sys/fs/cgroup", v2path, pid)
	return "", "", false
}

func fileInt(t *testing.T, path string) (int64, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the server's cgroup file: %v", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n, true
}

// TestCgroupOfRealServer reads the memory cgroup of a real server and
// compares it with the server's own cgroup files, found independently.
func TestCgroupOfRealServer(t *testing.T) {
	r := newReader(t)
	s := servertest.StartDefault(t)
	pid := s.PID()
	dir, name, v1 := expectedCgroupDir(t, pid)
	usageFile, limitFile := "memory.current", "memory.max"
	if v1 {
		usageFile, limitFile = "memory.usage_in_bytes", "memory.limit_in_bytes"
	}
	before, _ := fileInt(t, filepath.Join(dir, usageFile))
	m := r.Read(int64(pid))
	after, _ := fileInt(t, filepath.Join(dir, usageFile))
	if m.Cgroup != name {
		t.Fatalf("Cgroup %q, want %q (from /proc/%d/cgroup)", m.Cgroup, name, pid)
	}
	// The cgroup's usage moves while the test runs (this process may share
	// it); it must lie near what the file said just before and after.
	lo, hi := min(before, after), max(before, after)
	slack := hi/20 + 1<<20
	if !m.CgroupUsage.OK || m.CgroupUsage.V < lo-slack || m.CgroupUsage.V > hi+slack {
		t.Fatalf("CgroupUsage %+v, the file %s said %d then %d", m.CgroupUsage, filepath.Join(dir, usageFile), before, after)
	}
	// No limit is "max" (v2) or a number no machine has (v1: 2^63 less a
	// page when unset).
	var want source.Opt[int64]
	if limit, set := fileInt(t, filepath.Join(dir, limitFile)); set && limit < 1<<62 {
		want = source.Some(limit)
	}
	if m.CgroupLimit != want {
		t.Fatalf("CgroupLimit %+v, want %+v from %s", m.CgroupLimit, want, filepath.Join(dir, limitFile))
	}
	t.Logf("server pid %d: %s usage %d limit %+v", pid, m.Cgroup, m.CgroupUsage.V, m.CgroupLimit)
}

// fakeHost lays out a /proc and a /sys/fs/cgroup under a temporary
// directory: mountinfo lines (with MOUNT standing for the fake sysfs),
// /proc/PID/cgroup, and cgroup files (relative to the fake sysfs).
func fakeHost(t *testing.T, mountinfo []string, cgroup string, files map[string]string) (*Reader, int) {
	t.Helper()
	base := t.TempDir()
	proc, sys := filepath.Join(base, "proc"), filepath.Join(base, "sys")
	const pid = 4242
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "self", "stat"), "1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0\n")
	write(filepath.Join(proc, "self", "mountinfo"), strings.ReplaceAll(strings.Join(mountinfo, "\n")+"\n", "MOUNT", sys))
	write(filepath.Join(proc, strconv.Itoa(pid), "cgroup"), cgroup)
	for p, s := range files {
		write(filepath.Join(sys, p), s)
	}
	r, err := newAt(proc)
	if err != nil {
		t.Fatal(err)
	}
	return r, pid
}

// fakeSys is the sysfs of a Reader made by fakeHost: beside its proc.
func fakeSys(r *Reader) string { return filepath.Join(filepath.Dir(r.mount), "sys") }

// mustCgroupOf is r.cgroupOf(pid), failing the test when it finds none.
func mustCgroupOf(t *testing.T, r *Reader, pid int) memoryCgroup {
	t.Helper()
	cg, ok := r.cgroupOf(pid)
	if !ok {
		t.Fatalf("pid %d: no cgroup", pid)
	}
	return cg
}

const (
	mountV2     = "41 31 0:38 / MOUNT/fs/cgroup rw,relatime - cgroup2 cgroup2 rw"
	mountHybrid = "41 31 0:38 / MOUNT/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"
	mountV1Mem  = "35 31 0:32 / MOUNT/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory"
	mountV1CPU  = "32 31 0:29 / MOUNT/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu"
)

// v2Files and v1Files are a cgroup's usage and limit files under fakeHost's
// sysfs, in the directory dir, by the names of each cgroup version.
func v2Files(dir, current, max string) map[string]string {
	return map[string]string{dir + "/memory.current": current + "\n", dir + "/memory.max": max + "\n"}
}

func v1Files(dir, usage, limit string) map[string]string {
	return map[string]string{dir + "/memory.usage_in_bytes": usage + "\n", dir + "/memory.limit_in_bytes": limit + "\n"}
}

func TestCgroupLayouts(t *testing.T) {
	tests := []struct {
		name      string
		mountinfo []string
		cgroup    string
		files     map[string]string
		want      memoryCgroup
		none      bool
	}{
		{
			name:      "v2 systemd service with a limit",
			mountinfo: []string{mountV2},
			cgroup:    "0::/system.slice/valkey.service\n",
			files:     v2Files("fs/cgroup/system.slice/valkey.service", "104857600", "536870912"),
			want:      memoryCgroup{name: "v2:/system.slice/valkey.service", usage: 104857600, limit: 536870912},
		},
		{
			name:      "v2 max is no limit",
			mountinfo: []string{mountV2},
			cgroup:    "0::/user.slice/user-1000.slice/session-2.scope\n",
			files:     v2Files("fs/cgroup/user.slice/user-1000.slice/session-2.scope", "7000", "max"),
			want:      memoryCgroup{name: "v2:/user.slice/user-1000.slice/session-2.scope", usage: 7000, limit: -1},
		},
		{
			name:      "v2 root cgroup has no memory files",
			mountinfo: []string{mountV2},
			cgroup:    "0::/\n",
			files:     map[string]string{"fs/cgroup/cgroup.procs": "1\n"},
			none:      true,
		},
		{
			name:      "v2 inside a cgroup namespace (docker --cgroupns private, Kubernetes)",
			mountinfo: []string{mountV2},
			cgroup:    "0::/\n",
			files:     v2Files("fs/cgroup", "2000", "1073741824"),
			want:      memoryCgroup{name: "v2:/", usage: 2000, limit: 1 << 30},
		},
		{
			name:      "v2 cgroup outside vkwatch's namespace",
			mountinfo: []string{mountV2},
			cgroup:    "0::/../other/ctr\n",
			files:     map[string]string{"fs/cgroup/memory.current": "2000\n"},
			none:      true,
		},
		{
			name: "v1 Kubernetes pod, huge number is no limit",
			mountinfo: []string{mountV1CPU, mountV1Mem,
				"40 31 0:37 / MOUNT/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd"},
			cgroup: "9:name=systemd:/kubepods/besteffort/pod1/ctr\n4:memory:/kubepods/besteffort/pod1/ctr\n1:cpu:/kubepods/besteffort/pod1/ctr\n",
			files:  v1Files("fs/cgroup/memory/kubepods/besteffort/pod1/ctr", "3000", "9223372036854771712"),
			want:   memoryCgroup{name: "v1:/kubepods/besteffort/pod1/ctr", usage: 3000, limit: -1},
		},
		{
			name:      "v1 comma list holding memory",
			mountinfo: []string{"35 31 0:32 / MOUNT/fs/cgroup/memory,hugetlb rw - cgroup cgroup rw,memory,hugetlb"},
			cgroup:    "4:memory,hugetlb:/lxc/c1\n",
			files:     v1Files("fs/cgroup/memory,hugetlb/lxc/c1", "3000", "268435456"),
			want:      memoryCgroup{name: "v1:/lxc/c1", usage: 3000, limit: 256 << 20},
		},
		{
			name: "hybrid: v1 memory wins over the v2 hierarchy beside it",
			mountinfo: []string{mountV1Mem, mountHybrid,
				"31 23 0:28 / MOUNT/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755"},
			cgroup: "4:memory:/process_api/ab\n0::/\n",
			files: map[string]string{
				"fs/cgroup/memory/process_api/ab/memory.usage_in_bytes": "5000\n",
				"fs/cgroup/memory/process_api/ab/memory.limit_in_bytes": "9223372036854771712\n",
				"fs/cgroup/unified/cgroup.procs":                        "1\n",
			},
			want: memoryCgroup{name: "v1:/process_api/ab", usage: 5000, limit: -1},
		},
		{
			name:      "hybrid with memory in v2 (systemd unified_cgroup_hierarchy partly)",
			mountinfo: []string{mountV1CPU, mountHybrid},
			cgroup:    "1:cpu:/\n0::/system.slice/redis.service\n",
			files:     v2Files("fs/cgroup/unified/system.slice/redis.service", "6000", "max"),
			want:      memoryCgroup{name: "v2:/system.slice/redis.service", usage: 6000, limit: -1},
		},
		{
			name: "v1 docker without a cgroup namespace: the container's cgroup is bind-mounted",
			mountinfo: []string{
				"1000 999 0:32 /docker/0123abcd MOUNT/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory"},
			cgroup: "4:memory:/docker/0123abcd\n",
			files:  v1Files("fs/cgroup/memory", "8000", "2147483648"),
			want:   memoryCgroup{name: "v1:/docker/0123abcd", usage: 8000, limit: 2 << 30},
		},
		{
			name:      "v1 memory line without a mount for it",
			mountinfo: []string{mountV1CPU},
			cgroup:    "4:memory:/a\n1:cpu:/a\n",
			files:     map[string]string{"fs/cgroup/memory/a/memory.usage_in_bytes": "1\n"},
			none:      true,
		},
		{
			name:      "unreadable usage",
			mountinfo: []string{mountV2},
			cgroup:    "0::/a\n",
			files:     map[string]string{"fs/cgroup/a/memory.current": "junk\n"},
			none:      true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, pid := fakeHost(t, tc.mountinfo, tc.cgroup, tc.files)
			got, ok := r.cgroupOf(pid)
			if tc.none {
				if ok {
					t.Fatalf("found %+v, want none", got)
				}
				return
			}
			if !ok || got != tc.want {
				t.Fatalf("got %+v (%v), want %+v", got, ok, tc.want)
			}
		})
	}
}

// BenchmarkCgroupOf is what the cgroup adds to each Read: /proc/PID/cgroup
// and two memory files.
func BenchmarkCgroupOf(b *testing.B) {
	r := newReader(b)
	pid := os.Getpid()
	if _, ok := r.cgroupOf(pid); !ok {
		b.Fatal("no memory cgroup for this process")
	}
	b.ReportAllocs()
	for b.Loop() {
		r.cgroupOf(pid)
	}
}

// TestCgroupPlaceRemembered: /proc/PID/cgroup is looked up again only
// after cgroupEvery, or at once when the remembered cgroup is gone; the
// memory files are read at every call.
func TestCgroupPlaceRemembered(t *testing.T) {
	r, pid := fakeHost(t, []string{mountV2}, "0::/a\n", map[string]string{
		"fs/cgroup/a/memory.current": "100\n",
		"fs/cgroup/b/memory.current": "200\n",
	})
	now := time.Now()
	r.now = func() time.Time { return now }
	sys := filepath.Join(fakeSys(r), "fs", "cgroup")
	cgroupFile := filepath.Join(r.mount, strconv.Itoa(pid), "cgroup")
	if cg := mustCgroupOf(t, r, pid); cg.name != "v2:/a" || cg.usage != 100 {
		t.Fatalf("got %+v", cg)
	}
	if err := os.WriteFile(filepath.Join(sys, "a", "memory.current"), []byte("150\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cgroupFile, []byte("0::/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now = now.Add(cgroupEvery - time.Millisecond)
	if cg := mustCgroupOf(t, r, pid); cg.name != "v2:/a" || cg.usage != 150 {
		t.Errorf("within %s: got %+v, want /a read afresh (150)", cgroupEvery, cg)
	}
	now = now.Add(time.Millisecond)
	if cg := mustCgroupOf(t, r, pid); cg.name != "v2:/b" || cg.usage != 200 {
		t.Errorf("after %s: got %+v, want the move to /b seen", cgroupEvery, cg)
	}
	// The process moves back and /b disappears: seen at once.
	if err := os.WriteFile(cgroupFile, []byte("0::/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(sys, "b")); err != nil {
		t.Fatal(err)
	}
	if cg := mustCgroupOf(t, r, pid); cg.name != "v2:/a" {
		t.Errorf("after its cgroup was removed: got %+v, want /a", cg)
	}
}

// TestCgroupLimitRemembered: the limit is read with the cgroup's place, so
// a new limit shows after cgroupEvery, while the usage is read at every
// call.
func TestCgroupLimitRemembered(t *testing.T) {
	r, pid := fakeHost(t, []string{mountV2}, "0::/a\n", map[string]string{
		"fs/cgroup/a/memory.current": "100\n",
		"fs/cgroup/a/memory.max":     "1000\n",
	})
	now := time.Now()
	r.now = func() time.Time { return now }
	dir := filepath.Join(fakeSys(r), "fs", "cgroup", "a")
	if cg := mustCgroupOf(t, r, pid); cg.usage != 100 || cg.limit != 1000 {
		t.Fatalf("got %+v, want usage 100 limit 1000", cg)
	}
	for name, v := range map[string]string{"memory.current": "150\n", "memory.max": "max\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(cgroupEvery - time.Millisecond)
	if cg := mustCgroupOf(t, r, pid); cg.usage != 150 || cg.limit != 1000 {
		t.Errorf("within %s: got %+v, want usage 150 read afresh, limit 1000 remembered", cgroupEvery, cg)
	}
	now = now.Add(time.Millisecond)
	if cg := mustCgroupOf(t, r, pid); cg.usage != 150 || cg.limit != -1 {
		t.Errorf("after %s: got %+v, want the limit lifted (-1)", cgroupEvery, cg)
	}
}

// TestHostMemAvailableShared: one read of /proc/meminfo serves every
// server for hostMemEvery; a host without it gives none.
func TestHostMemAvailableShared(t *testing.T) {
	r, _ := fakeHost(t, []string{mountV2}, "0::/a\n", nil)
	now := time.Now()
	r.now = func() time.Time { return now }
	meminfo := filepath.Join(r.mount, "meminfo")
	if got := r.hostMemAvailable(); got.OK {
		t.Fatalf("no /proc/meminfo: got %v, want absent", got)
	}
	write := func(kb string) {
		t.Helper()
		if err := os.WriteFile(meminfo, []byte("MemTotal: 4000 kB\nMemFree: 100 kB\nMemAvailable: "+kb+" kB\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1000")
	now = now.Add(hostMemEvery)
	if got := r.hostMemAvailable(); got.V != 1000<<10 || !got.OK {
		t.Fatalf("got %v, want %d", got, 1000<<10)
	}
	write("2000")
	now = now.Add(hostMemEvery - time.Millisecond)
	if got := r.hostMemAvailable(); got.V != 1000<<10 {
		t.Errorf("within %s: got %v, want the last read (%d)", hostMemEvery, got, 1000<<10)
	}
	now = now.Add(time.Millisecond)
	if got := r.hostMemAvailable(); got.V != 2000<<10 {
		t.Errorf("after %s: got %v, want %d", hostMemEvery, got, 2000<<10)
	}
}

// TestCgroupUsageShared: one read of a cgroup's usage serves the other
// processes in it for usageEvery, never the same process twice, and a
// read after usageEvery is fresh.
func TestCgroupUsageShared(t *testing.T) {
	r, pid := fakeHost(t, []string{mountV2}, "0::/a\n", map[string]string{"fs/cgroup/a/memory.current": "100\n"})
	other := pid + 1
	if err := os.MkdirAll(filepath.Join(r.mount, strconv.Itoa(other)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.mount, strconv.Itoa(other), "cgroup"), []byte("0::/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.now = func() time.Time { return now }
	usage := filepath.Join(fakeSys(r), "fs", "cgroup", "a", "memory.current")
	if u := mustCgroupOf(t, r, pid).usage; u != 100 {
		t.Fatalf("first read: %d, want 100", u)
	}
	if err := os.WriteFile(usage, []byte("150\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u := mustCgroupOf(t, r, other).usage; u != 100 {
		t.Errorf("another process of the cgroup within %s: %d, want the shared read (100)", usageEvery, u)
	}
	if u := mustCgroupOf(t, r, pid).usage; u != 150 {
		t.Errorf("the same process again: %d, want a fresh read (150)", u)
	}
	if err := os.WriteFile(usage, []byte("175\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now = now.Add(usageEvery)
	if u := mustCgroupOf(t, r, other).usage; u != 175 {
		t.Errorf("after %s: %d, want a fresh read (175)", usageEvery, u)
	}
}

// TestPSSEvery: a server's PSS is read every serverPSSEvery up to
// pssPerSecond servers, less often beyond, pssPerSecond reads a second in
// all.
func TestPSSEvery(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, serverPSSEvery}, {1, serverPSSEvery}, {pssPerSecond, serverPSSEvery}, {pssPerSecond + 1, 2 * serverPSSEvery}, {100, 10 * serverPSSEvery}} {
		if got := pssEvery(c.n); got != c.want {
			t.Errorf("pssEvery(%d) = %s, want %s", c.n, got, c.want)
		}
	}
}

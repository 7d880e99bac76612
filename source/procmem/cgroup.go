package procmem

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// The memory cgroup of a process: where /proc/PID/cgroup puts it, resolved
// against the cgroup file systems mounted in vkwatch's own mount namespace
// (/proc/self/mountinfo), so that what real hosts do is handled the same
// way as the plain layout:
//
//   - cgroup v2 (`0::/path`): MOUNT/path/memory.current and memory.max;
//   - cgroup v1 (`N:memory:/path`, or a comma list holding memory, e.g.
//     `4:memory,hugetlb:/path`): MOUNT/path/memory.usage_in_bytes and
//     memory.limit_in_bytes;
//   - hybrid hosts (v1 controllers with a v2 hierarchy beside it, as on this
//     project's build machine and on older systemd hosts): the memory
//     controller is bound to one hierarchy only, so a v1 memory line wins;
//     the v2 line then names a cgroup without memory files;
//   - a mount whose root is not the hierarchy's root (docker without a
//     cgroup namespace bind-mounts /docker/ID at /sys/fs/cgroup/memory, and
//     /proc/PID/cgroup still says /docker/ID): the mount's root is cut off
//     the path before it is joined to the mount point;
//   - a cgroup namespace (docker --cgroupns private, Kubernetes with
//     cgroup v2): /proc/PID/cgroup is relative to the namespace root of the
//     process that reads it, and so is the mount, so the same rule works; a
//     cgroup outside vkwatch's namespace shows as /../... and is not read.
//
// A cgroup without a memory file (the root cgroup, or a v2 cgroup whose
// parent did not enable the memory controller) is no memory cgroup: none is
// reported. The mounts are read once per Reader, /proc/PID/cgroup and the
// limit once per cgroupEvery, the usage at each Read.

// noLimitV1 is where a cgroup v1 limit stops being a limit: unset, the
// kernel reports PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB
// pages, a little less with larger pages), and no machine has 4 EiB.
const noLimitV1 = 1 << 62

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	root  string // the hierarchy path mounted (mountinfo's root field)
	point string // where it is mounted
}

// cgroupMounts are the hierarchies that can hold memory figures.
type cgroupMounts struct {
	v1memory []cgroupMount // cgroup (v1) mounts with the memory controller
	v2       []cgroupMount // cgroup2 mounts
}

// readCgroupMounts lists the cgroup mounts of the file system at proc.
func readCgroupMounts(fs procfs.FS) cgroupMounts {
	var m cgroupMounts
	mounts, err := fs.GetMounts()
	if err != nil {
		return m
	}
	for _, mi := range mounts {
		cm := cgroupMount{root: mi.Root, point: mi.MountPoint}
		switch mi.FSType {
		case "cgroup2":
			m.v2 = append(m.v2, cm)
		case "cgroup":
			if _, ok := mi.SuperOptions["memory"]; ok {
				m.v1memory = append(m.v1memory, cm)
			}
		}
	}
	return m
}

// memoryCgroup is what was read of a process's memory cgroup.
type memoryCgroup struct {
	name  string // "v1:/path" or "v2:/path", as /proc/PID/cgroup says
	usage int64
	limit int64 // -1: none
}

// cgroupEvery is how long the place of a process's memory cgroup, found
// from /proc/PID/cgroup, and its limit are trusted before they are read
// again: a process seldom moves to another cgroup, and a limit seldom
// changes (`docker update --memory` shows within cgroupEvery). The usage
// is read at every Read.
const cgroupEvery = 10 * time.Second

// cgroupPlace is where a process's memory cgroup was found.
type cgroupPlace struct {
	at   time.Time
	dir  string // "" when the process has no memory cgroup vkwatch can read
	path string
	v1   bool
	// limit was read with the place: -1 when there is none.
	limit int64
}

// cgroupOf reads the memory cgroup of pid; false when there is none that
// vkwatch can read.
func (r *Reader) cgroupOf(pid int) (memoryCgroup, bool) {
	now := r.now()
	r.cgMu.Lock()
	pl, ok := r.cgroups[pid]
	r.cgMu.Unlock()
	if ok && fresh(pl.at, now, cgroupEvery) {
		if pl.dir == "" {
			return memoryCgroup{}, false
		}
		if cg, ok := r.readUsage(pl, pid, now); ok {
			return cg, true
		}
		// The cgroup is gone (the process moved): look again.
	}
	pl = r.findCgroup(pid)
	pl.at = now
	if pl.dir != "" {
		pl.readLimit()
	}
	r.cgMu.Lock()
	for p, v := range r.cgroups {
		if now.Sub(v.at) > 2*cgroupEvery {
			delete(r.cgroups, p)
		}
	}
	r.cgroups[pid] = pl
	r.cgMu.Unlock()
	if pl.dir == "" {
		return memoryCgroup{}, false
	}
	return r.readUsage(pl, pid, now)
}

// usageEvery is how long one read of a cgroup's usage serves the other
// servers in it: the servers of a fleet sampled in one wake-up on one host
// (often all in one cgroup) read it once between them. A process asking
// again always reads afresh, so a server sampled alone, even at the
// shortest --interval, sees every change.
const usageEvery = 5 * time.Millisecond

// usageReading is one read of a cgroup's usage and the processes it
// served.
type usageReading struct {
	at     time.Time
	cg     memoryCgroup
	ok     bool
	served []int
}

// readUsage is pl.read for process pid, shared with the other processes
// of the cgroup for usageEvery.
func (r *Reader) readUsage(pl cgroupPlace, pid int, now time.Time) (memoryCgroup, bool) {
	r.usageMu.Lock()
	defer r.usageMu.Unlock()
	if u, ok := r.usage[pl.dir]; ok && fresh(u.at, now, usageEvery) && !slices.Contains(u.served, pid) {
		u.served = append(u.served, pid)
		r.usage[pl.dir] = u
		u.cg.limit = pl.limit
		return u.cg, u.ok
	}
	cg, ok := pl.read()
	for k, u := range r.usage {
		if now.Sub(u.at) > cgroupEvery {
			delete(r.usage, k)
		}
	}
	r.usage[pl.dir] = usageReading{at: now, cg: cg, ok: ok, served: []int{pid}}
	return cg, ok
}

// read reads the cgroup's usage; its limit is the one read with the place.
func (pl cgroupPlace) read() (memoryCgroup, bool) {
	file, name := "memory.current", "v2:"+pl.path
	if pl.v1 {
		file, name = "memory.usage_in_bytes", "v1:"+pl.path
	}
	usage, ok := readInt(filepath.Join(pl.dir, file))
	if !ok {
		return memoryCgroup{}, false
	}
	return memoryCgroup{name: name, usage: usage, limit: pl.limit}, true
}

// readLimit reads the cgroup's limit: v2's "max", or a v1 limit of about
// 4 EiB (unset), is none.
func (pl *cgroupPlace) readLimit() {
	pl.limit = -1
	if pl.v1 {
		if l, ok := readInt(filepath.Join(pl.dir, "memory.limit_in_bytes")); ok && l < noLimitV1 {
			pl.limit = l
		}
		return
	}
	if l, ok := readInt(filepath.Join(pl.dir, "memory.max")); ok {
		pl.limit = l
	}
}

// findCgroup finds where the memory cgroup of pid is mounted.
func (r *Reader) findCgroup(pid int) cgroupPlace {
	r.mountsOnce.Do(func() { r.mounts = readCgroupMounts(r.fs) })
	p, err := r.fs.Proc(pid)
	if err != nil {
		return cgroupPlace{}
	}
	cgs, err := p.Cgroups()
	if err != nil {
		return cgroupPlace{}
	}
	// v1 first: where a v1 hierarchy holds the memory controller, the v2
	// one cannot.
	for _, cg := range cgs {
		if cg.HierarchyID != 0 && slices.Contains(cg.Controllers, "memory") {
			if dir, ok := resolve(r.mounts.v1memory, cg.Path); ok {
				return cgroupPlace{dir: dir, path: cg.Path, v1: true}
			}
		}
	}
	for _, cg := range cgs {
		if cg.HierarchyID == 0 && len(cg.Controllers) == 0 {
			if dir, ok := resolve(r.mounts.v2, cg.Path); ok {
				return cgroupPlace{dir: dir, path: cg.Path}
			}
		}
	}
	return cgroupPlace{}
}

// resolve finds the directory of cgroup path p in the mount that holds it
// (the one with the longest root that is p or a parent of p).
func resolve(mounts []cgroupMount, p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
		// Outside vkwatch's cgroup namespace: not reachable from here.
		return "", false
	}
	best, rel := -1, ""
	for i, m := range mounts {
		var r string
		switch {
		case m.root == "/":
			r = p
		case p == m.root:
			r = "/"
		case strings.HasPrefix(p, m.root+"/"):
			r = p[len(m.root):]
		default:
			continue
		}
		if best < 0 || len(m.root) > len(mounts[best].root) {
			best, rel = i, r
		}
	}
	if best < 0 {
		return "", false
	}
	return filepath.Join(mounts[best].point, rel), true
}

// readInt reads a file holding one decimal number.
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

package procmem

import (
	"path/filepath"
	"time"

	"github.com/vkwatch/vkwatch/source/forecast"
)

// thpEvery is how often a server's transparent huge pages are read: the
// kernel's setting changes by hand, AnonHugePages slowly, and the
// server's smaps_rollup costs the kernel a walk of its pages (see
// serverPSSEvery), so every 10 s, like a cgroup's limit. The kernel's
// setting is one file for every server: read once a thpEvery in all.
const thpEvery = 10 * time.Second

// thpPerEvery is how many servers' smaps_rollup one Reader reads for
// their huge pages each thpEvery: beyond it, each server's is read less
// often (a hundred servers: every 100 s each), so that a fleet's THP costs
// one read a second, not ten, beside its PSS reads (pssPerSecond).
const thpPerEvery = 10

// thpEveryFor is how often each of n servers' huge pages are read.
func thpEveryFor(n int) time.Duration {
	return thpEvery * time.Duration(max(1, (n+thpPerEvery-1)/thpPerEvery))
}

type thpReading struct {
	at  time.Time
	thp forecast.THP
}

// thpOf is pid's THP, read again once thpEveryFor has passed. The files
// are under the directory that holds the proc mount ("/" on a real host).
func (r *Reader) thpOf(pid int) forecast.THP {
	now := r.now()
	r.thpMu.Lock()
	defer r.thpMu.Unlock()
	root := filepath.Dir(r.mount)
	if r.thpKernelAt.IsZero() || !fresh(r.thpKernelAt, now, thpEvery) {
		r.thpKernelAt, r.thpKernel = now, forecast.ReadTHPKernel(root)
	}
	every := thpEveryFor(len(r.thp))
	if last, ok := r.thp[pid]; ok && fresh(last.at, now, every) {
		last.thp.Kernel = r.thpKernel
		return last.thp
	}
	for p, v := range r.thp {
		if now.Sub(v.at) > 2*every {
			delete(r.thp, p)
		}
	}
	t := forecast.THP{Kernel: r.thpKernel, AnonHuge: forecast.ReadAnonHuge(root, int64(pid))}
	r.thp[pid] = thpReading{at: now, thp: t}
	return t
}

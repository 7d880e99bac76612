package procmem

import (
	"path/filepath"
	"time"

	"github.com/vkwatch/vkwatch/source/forecast"
)

// thpEvery is how often a server's transparent huge pages are read: the
// kernel's setting changes by hand, AnonHugePages slowly, and the
// server's smaps_rollup costs the kernel a walk of its pages (see
// serverPSSEvery), so every 10 s, like a cgroup's limit.
const thpEvery = 10 * time.Second

type thpReading struct {
	at  time.Time
	thp forecast.THP
}

// thpOf is pid's THP, read again once thpEvery has passed. The files are
// under the directory that holds the proc mount ("/" on a real host).
func (r *Reader) thpOf(pid int) forecast.THP {
	now := r.now()
	r.thpMu.Lock()
	defer r.thpMu.Unlock()
	if last, ok := r.thp[pid]; ok && fresh(last.at, now, thpEvery) {
		return last.thp
	}
	for p, v := range r.thp {
		if now.Sub(v.at) > 2*thpEvery {
			delete(r.thp, p)
		}
	}
	t := forecast.ReadTHP(filepath.Dir(r.mount), int64(pid))
	r.thp[pid] = thpReading{at: now, thp: t}
	return t
}

package forecast

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// HugePage is the page a write copies where transparent huge pages back
// the heap: one write to a 2 MiB page copies all of it, 512 times a 4 KiB
// page's cost.
const HugePage = 2 << 20

// THP is what transparent huge pages mean for a local server's forks.
type THP struct {
	// Kernel is the kernel's choice in
	// /sys/kernel/mm/transparent_hugepage/enabled: always, madvise or
	// never; empty when it could not be read.
	Kernel string
	// AnonHuge is AnonHugePages of the server's smaps_rollup: its memory
	// huge pages back now. Absent when it could not be read.
	AnonHuge source.Opt[int64]
}

// maxSysFile bounds what is read of a /sys or /proc file: these are a
// line or a few dozen, and anything longer is not what it should be.
const maxSysFile = 64 << 10

// ReadTHP reads the kernel's setting and the server's huge pages under
// root ("/" on a real host; a testdata tree in tests). A file that
// cannot be read leaves its field unknown.
func ReadTHP(root string, pid int64) THP {
	return THP{Kernel: ReadTHPKernel(root), AnonHuge: ReadAnonHuge(root, pid)}
}

// ReadTHPKernel is the kernel's transparent huge page setting under root,
// "" when it cannot be read: one file for every server of the host.
func ReadTHPKernel(root string) string {
	if b, err := readBounded(filepath.Join(root, "sys/kernel/mm/transparent_hugepage/enabled")); err == nil {
		return bracketed(string(b))
	}
	return ""
}

// ReadAnonHuge is AnonHugePages of process pid's smaps_rollup under root.
func ReadAnonHuge(root string, pid int64) source.Opt[int64] {
	if b, err := readBounded(filepath.Join(root, "proc", strconv.FormatInt(pid, 10), "smaps_rollup")); err == nil {
		return anonHuge(b)
	}
	return source.Opt[int64]{}
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, maxSysFile)
	n, err := f.Read(b)
	if n == 0 && err != nil {
		return nil, err
	}
	return b[:n], nil
}

// bracketed is the choice the kernel marks: "always [madvise] never" ->
// "madvise".
func bracketed(s string) string {
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j <= i+1 {
		return ""
	}
	switch c := s[i+1 : j]; c {
	case "always", "madvise", "never":
		return c
	}
	return ""
}

// anonHuge is the AnonHugePages line of a smaps_rollup, in bytes.
func anonHuge(b []byte) source.Opt[int64] {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return source.Opt[int64]{}
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return source.Opt[int64]{}
		}
		return source.Some(kb << 10)
	}
	return source.Opt[int64]{}
}

// Cause says whether huge pages can back the server's heap, so that one
// write copies 2 MiB rather than 4 KiB, and what shows it, briefly: its
// smaps_rollup shows huge pages now ("AnonHugePages 260 MiB"), or the
// kernel hands them out unasked ("always") and the server does not turn
// them off for itself (disableTHP: its disable-thp setting, Redis 6.2+
// and Valkey, default yes; absent where unknown): "THP [always],
// disable-thp no". "madvise" gives them only to memory that asks, which
// Redis and Valkey do not.
func (t THP) Cause(disableTHP source.Opt[bool]) (string, bool) {
	if v, ok := t.AnonHuge.Get(); ok && v > 0 {
		return fmt.Sprintf("AnonHugePages %d MiB", v>>20), true
	}
	if t.Kernel == "always" && !disableTHP.V {
		if !disableTHP.OK {
			return "THP [always], disable-thp n/a", true
		}
		return "THP [always], disable-thp no", true
	}
	return "", false
}

// Warning is Cause as a sentence.
func (t THP) Warning(disableTHP source.Opt[bool]) (string, bool) {
	c, ok := t.Cause(disableTHP)
	if !ok {
		return "", false
	}
	return "transparent huge pages can back the heap (" + c + "): one write during a save copies 2 MiB, not 4 KiB", true
}

// THPOf is the THP of a sample's server as its /proc reading saw it.
func THPOf(s *source.Sample) THP {
	return THP{Kernel: s.Proc.THPKernel, AnonHuge: s.Proc.AnonHugePages}
}

package main

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// refProberSource is the reference prober: the cheapest PING probe this
// machine allows, in C, one thread per server (see the file's comment).
// vkwatch's own cost is judged as a ratio to it, measured side by side.
//
//go:embed refprober/prober.c
var refProberSource []byte

// refProber is the reference prober built for this run, or why there is
// none.
type refProber struct {
	bin     string
	missing string // why it could not be built; "" when bin is usable
}

// buildRefProber compiles the reference prober with the system cc into
// dir. Without cc it says so: the phases that need it then report that
// they could not run, never a number.
func buildRefProber(ctx context.Context, dir string) refProber {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return refProber{missing: "no C compiler (cc) on PATH to build the reference prober (apt-get install gcc)"}
	}
	src := filepath.Join(dir, "prober.c")
	if err := os.WriteFile(src, refProberSource, 0o644); err != nil {
		return refProber{missing: err.Error()}
	}
	bin := filepath.Join(dir, "prober")
	out, err := exec.CommandContext(ctx, cc, "-O2", "-pthread", "-o", bin, src).CombinedOutput()
	if err != nil {
		return refProber{missing: fmt.Sprintf("%s could not build the reference prober: %v: %s", cc, err, strings.TrimSpace(string(out)))}
	}
	return refProber{bin: bin}
}

// ok reports whether the reference prober can run.
func (r refProber) ok() bool { return r.bin != "" }

// argv is the command line probing srvs every interval; nextTick is its
// -n mode, each reply read at the next tick (one wake-up per PING).
func (r refProber) argv(interval time.Duration, srvs []*testServer, nextTick bool) []string {
	a := []string{r.bin}
	if nextTick {
		a = append(a, "-n")
	}
	a = append(a, strconv.FormatInt(max(interval.Microseconds(), 1), 10))
	for _, s := range srvs {
		a = append(a, s.Addr)
	}
	return a
}

// refResult is the reference prober's summary of one server.
type refResult struct {
	Addr  string
	Pings int64
	P50   time.Duration
	Mean  time.Duration
	Max   time.Duration
}

// parseRefOutput reads the lines the reference prober prints when it ends:
// "ADDR pings N p50_ns X mean_ns Y max_ns Z", or "ADDR error WHY".
func parseRefOutput(out string) ([]refResult, error) {
	var res []refResult
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[1] == "error" {
			return nil, fmt.Errorf("reference prober: %s: %s", f[0], strings.Join(f[2:], " "))
		}
		if len(f) != 9 || f[1] != "pings" || f[3] != "p50_ns" || f[5] != "mean_ns" || f[7] != "max_ns" {
			continue
		}
		var n [4]int64
		for i, s := range []string{f[2], f[4], f[6], f[8]} {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("reference prober: %q: %w", sc.Text(), err)
			}
			n[i] = v
		}
		res = append(res, refResult{Addr: f[0], Pings: n[0], P50: time.Duration(n[1]), Mean: time.Duration(n[2]), Max: time.Duration(n[3])})
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("reference prober printed no result: %q", out)
	}
	return res, nil
}

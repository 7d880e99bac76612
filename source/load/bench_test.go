package load_test

// Benchmarks of the built-in load against a real server, and side-by-side
// comparisons with redis-benchmark on the same server in the same run:
//
//	go test ./source/load -run '^$' -bench . -benchtime 3x
//
// BenchmarkPreloadVsRedisBenchmark reports the SET rate of
// `redis-benchmark -P 64 -t set -n N -r N -d 300` and of Preload with the
// same key count and value size, and their ratio (target >= 0.8).
// BenchmarkWritersVsRedisBenchmark does the same for
// `redis-benchmark -t set -c 8 -d 300 -r N` against 8 Writers (target >= 0.9).
// Both fail, not skip, when redis-benchmark (or valkey-benchmark) is missing.

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

const (
	benchPreloadKeys = 1_000_000 // as in the README's comparison
	benchWriterKeys  = 100_000
	benchWriterOps   = 300_000 // SETs per measured writers run (a few seconds)
	benchValueSize   = 300
)

func BenchmarkPreload(b *testing.B) {
	s := servertest.StartDefault(b)
	c := servertest.Client(b, s)
	ctx := context.Background()
	opts := &redis.Options{Addr: s.Addr}
	const n = 200_000
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := c.FlushAll(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := load.Preload(ctx, opts, load.Config{Keys: n, ValueSize: benchValueSize}, nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "sets/s")
}

func BenchmarkPreloadVsRedisBenchmark(b *testing.B) {
	rb := benchmarkBinary(b)
	s := servertest.StartDefault(b)
	c := servertest.Client(b, s)
	ctx := context.Background()
	opts := &redis.Options{Addr: s.Addr}
	n := strconv.Itoa(benchPreloadKeys)
	var theirs, ours float64
	for i := 0; i < b.N; i++ {
		flush(b, c)
		theirs += runRedisBenchmark(b, rb, s.Port, "-P", "64", "-t", "set", "-n", n, "-r", n, "-d", strconv.Itoa(benchValueSize))
		flush(b, c)
		start := time.Now()
		if err := load.Preload(ctx, opts, load.Config{Keys: benchPreloadKeys, ValueSize: benchValueSize}, nil); err != nil {
			b.Fatal(err)
		}
		ours += float64(benchPreloadKeys) / time.Since(start).Seconds()
	}
	report(b, ours, theirs)
}

func BenchmarkWritersVsRedisBenchmark(b *testing.B) {
	rb := benchmarkBinary(b)
	s := servertest.StartDefault(b)
	ctx := context.Background()
	opts := &redis.Options{Addr: s.Addr}
	cfg := load.Config{Keys: benchWriterKeys, ValueSize: benchValueSize, Writers: 8}
	n, ops := strconv.Itoa(benchWriterKeys), strconv.Itoa(benchWriterOps)
	rbArgs := []string{"-t", "set", "-c", "8", "-d", strconv.Itoa(benchValueSize), "-r", n}
	// Both keyspaces exist before measuring, so both runs overwrite keys
	// rather than one of them creating them.
	if err := load.Preload(ctx, opts, cfg, nil); err != nil {
		b.Fatal(err)
	}
	runRedisBenchmark(b, rb, s.Port, append([]string{"-P", "64", "-n", strconv.Itoa(3 * benchWriterKeys)}, rbArgs...)...)

	var theirs, ours float64
	var theirCPU, ourCPU time.Duration
	for i := 0; i < b.N; i++ {
		theirs += runRedisBenchmark(b, rb, s.Port, append([]string{"-n", ops}, rbArgs...)...)
		theirCPU += lastToolCPU
		ours += runWriters(b, opts, cfg, benchWriterOps)
		ourCPU += lastSelfCPU
	}
	report(b, ours, theirs)
	b.ReportMetric(float64(ourCPU.Microseconds())/float64(b.N*benchWriterOps), "vkwatch_cpu_us/set")
	b.ReportMetric(float64(theirCPU.Microseconds())/float64(b.N*benchWriterOps), "redis-benchmark_cpu_us/set")
}

// runWriters starts writers and returns their SET rate over the time they
// took to complete ops SETs.
func runWriters(b *testing.B, opts *redis.Options, cfg load.Config, ops uint64) float64 {
	w, err := load.StartWriters(context.Background(), opts, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	cpu0 := selfCPU()
	defer func() { lastSelfCPU = selfCPU() - cpu0 }()
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for w.Ops() < ops {
		if time.Now().After(deadline) {
			b.Fatalf("writers did only %d SETs in 2 minutes (errors %d, last %v)", w.Ops(), w.Errors(), w.LastError())
		}
		time.Sleep(time.Millisecond) // polling interval
	}
	return float64(w.Ops()) / time.Since(start).Seconds()
}

func report(b *testing.B, ours, theirs float64) {
	ours /= float64(b.N)
	theirs /= float64(b.N)
	b.ReportMetric(ours, "vkwatch_sets/s")
	b.ReportMetric(theirs, "redis-benchmark_sets/s")
	b.ReportMetric(ours/theirs, "ratio")
}

func flush(b *testing.B, c *redis.Client) {
	b.Helper()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// benchmarkBinary finds redis-benchmark or valkey-benchmark; the comparison
// is the point of these benchmarks, so a missing one fails them.
func benchmarkBinary(b *testing.B) string {
	b.Helper()
	for _, name := range []string{"valkey-benchmark", "redis-benchmark"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	b.Fatal("neither valkey-benchmark nor redis-benchmark is on PATH (apt-get install redis-tools)")
	return ""
}

// CPU time of the last tool run and of the last in-process run: on a small
// machine the client's CPU is taken from the server, so it is worth seeing.
var lastToolCPU, lastSelfCPU time.Duration

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var rpsRE = regexp.MustCompile(`SET: ([0-9.]+) requests per second`)

// runRedisBenchmark runs the benchmark tool against the loopback server and
// returns its SET requests per second.
func runRedisBenchmark(b *testing.B, bin string, port int, args ...string) float64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args = append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-q"}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil {
		lastToolCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", bin, args, err, out)
	}
	m := rpsRE.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		b.Fatalf("no SET rate in the output of %s %v:\n%s", bin, args, out)
	}
	rps, err := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	if err != nil {
		b.Fatal(err)
	}
	return rps
}

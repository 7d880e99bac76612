package demo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/demo"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server"
)

const testKeys = 20000

// isolate points the temporary directories of the servers at a directory
// of the test's own, so that leftovers can be seen; it returns it.
func isolate(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	return dir
}

// realServer is the binary the wrappers run.
func realServer(t *testing.T) string {
	t.Helper()
	bin, err := server.Find("")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// wrapper writes an executable script that records its PID (which the
// server keeps, since the script execs it) and then runs body.
func wrapper(t *testing.T, body string) (bin, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "pids")
	bin = filepath.Join(dir, "fake-server")
	script := "#!/bin/bash\necho $$ >> " + pidFile + "\n" + body + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, pidFile
}

// assertNothingLeft checks that no recorded process is alive and that the
// temporary directory holds no server directory.
func assertNothingLeft(t *testing.T, tmp string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		// A process that has ended but not been reaped would still
		// answer signal 0; server.Stop waits for its children, so an
		// answer here is a live server.
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d is still alive", pid)
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in the temporary directory: %s", e.Name())
	}
}

func readPIDs(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, n)
	}
	return pids
}

func dbsize(t *testing.T, opts *redis.Options) int64 {
	t.Helper()
	c := redis.NewClient(opts)
	defer c.Close()
	n, err := c.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func waitOps(t *testing.T, w *load.Writers, n uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for w.Ops() < n {
		if time.Now().After(deadline) {
			t.Fatalf("writers did %d SETs, want %d (errors %d, last %v)", w.Ops(), n, w.Errors(), w.LastError())
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}

func TestAutoOnRedisIsIdleVsLoadAndCloseLeavesNothing(t *testing.T) {
	tmp := isolate(t)
	var msgs []string
	d, err := demo.Start(context.Background(), demo.Config{
		Keys:     testKeys,
		Progress: func(m string) { msgs = append(msgs, m) },
	})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	pids := []int{d.Servers[0].PID(), d.Servers[1].PID()}
	closed := false
	defer func() {
		if !closed {
			d.Close()
		}
	}()

	if d.Scenario != demo.ScenarioLoad {
		t.Fatalf("scenario %q on %s, want %q", d.Scenario, d.Servers[0].Bin, demo.ScenarioLoad)
	}
	for _, want := range []string{"no forkless save", "left idle", "right under 8 writers", "7."} {
		if !strings.Contains(d.Why, want) {
			t.Errorf("Why %q does not say %q", d.Why, want)
		}
	}
	if d.Writers[0] != nil || d.Writers[1] == nil {
		t.Fatalf("writers %v, want none on the left and some on the right", d.Writers)
	}
	for i := range d.Servers {
		if n := dbsize(t, d.Options[i]); n != testKeys {
			t.Errorf("server %d holds %d keys, want %d", i, n, testKeys)
		}
	}
	waitOps(t, d.Writers[1], 1000)
	if len(msgs) == 0 {
		t.Error("no progress messages while starting")
	}

	if err := d.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	closed = true
	if err := d.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	assertNothingLeft(t, tmp, pids)
}

func TestForklessOnRedisIsAClearError(t *testing.T) {
	tmp := isolate(t)
	bin, pidFile := wrapper(t, "exec "+realServer(t)+` "$@"`)
	_, err := demo.Start(context.Background(), demo.Config{ServerBin: bin, Keys: testKeys, Scenario: demo.ScenarioForkless})
	if err == nil {
		t.Fatal("forkless scenario started on a server without forkless save")
	}
	if !strings.Contains(err.Error(), "no forkless save") || !strings.Contains(err.Error(), string(demo.ScenarioLoad)) {
		t.Fatalf("error does not say what is wrong and what to do instead: %v", err)
	}
	assertNothingLeft(t, tmp, readPIDs(t, pidFile))
}

// A binary that knows the forkless options: the wrapper drops them before
// running the real server and records what it was given.
func TestForklessScenarioWhenSupported(t *testing.T) {
	tmp := isolate(t)
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	bin, pidFile := wrapper(t, `
echo "$*" >> `+argsFile+`
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--forkless-infrastructure-enabled|--bgsave-default-method) shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
exec `+realServer(t)+` "${args[@]}"`)
	d, err := demo.Start(context.Background(), demo.Config{ServerBin: bin, Keys: testKeys, Writers: 2, SaveDelay: 7})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer d.Close()
	if d.Scenario != demo.ScenarioForkless || !strings.Contains(d.Why, "left fork, right forkless") {
		t.Fatalf("scenario %q (%q), want %q", d.Scenario, d.Why, demo.ScenarioForkless)
	}
	if d.Writers[0] == nil || d.Writers[1] == nil {
		t.Fatal("forkless scenario without writers on both sides")
	}
	waitOps(t, d.Writers[0], 500)
	waitOps(t, d.Writers[1], 500)
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	var fork, forkless int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(line, "--port") {
			continue // --version
		}
		switch {
		case strings.Contains(line, "--bgsave-default-method forkless"):
			forkless++
		case strings.Contains(line, "--bgsave-default-method fork"):
			fork++
		default:
			continue // the probe
		}
		if !strings.Contains(line, "--forkless-infrastructure-enabled yes") || !strings.Contains(line, "--rdb-key-save-delay 7") {
			t.Errorf("server started with %q", line)
		}
	}
	if fork != 1 || forkless != 1 {
		t.Fatalf("servers started with fork %d and forkless %d times, want once each:\n%s", fork, forkless, b)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, tmp, readPIDs(t, pidFile))
}

func TestBinaryThatFailsLeavesNothing(t *testing.T) {
	tmp := isolate(t)
	bin, pidFile := wrapper(t, "exit 1")
	for _, sc := range []demo.Scenario{demo.ScenarioAuto, demo.ScenarioLoad} {
		if _, err := demo.Start(context.Background(), demo.Config{ServerBin: bin, Keys: testKeys, Scenario: sc}); err == nil {
			t.Fatalf("scenario %s started with a binary that exits 1", sc)
		}
	}
	assertNothingLeft(t, tmp, readPIDs(t, pidFile))
}

// The second server start fails after the first succeeded: the first is
// stopped and removed.
func TestSecondServerFailingLeavesNothing(t *testing.T) {
	tmp := isolate(t)
	dir := t.TempDir()
	bin, pidFile := wrapper(t, `
case "$*" in *--port*) ;; *) exec `+realServer(t)+` "$@" ;; esac
# Only the first server start gets a server; a lock keeps the two
# parallel starts apart.
exec 9>`+filepath.Join(dir, "lock")+`
flock 9
if [ -e `+filepath.Join(dir, "started")+` ]; then exit 1; fi
touch `+filepath.Join(dir, "started")+`
flock -u 9
exec `+realServer(t)+` "$@"`)
	_, err := demo.Start(context.Background(), demo.Config{ServerBin: bin, Keys: testKeys, Scenario: demo.ScenarioLoad})
	if err == nil {
		t.Fatal("started although one server could not")
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err != nil {
		t.Fatal("no server was started before the failure; the test proves nothing")
	}
	assertNothingLeft(t, tmp, readPIDs(t, pidFile))
}

func TestCancelDuringPreloadLeavesNothing(t *testing.T) {
	tmp := isolate(t)
	bin, pidFile := wrapper(t, "exec "+realServer(t)+` "$@"`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := demo.Start(ctx, demo.Config{ServerBin: bin, Keys: testKeys, Progress: func(m string) {
		if strings.HasPrefix(m, "preloading") {
			cancel()
		}
	}})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("start returned %v after its context was cancelled during the preload", err)
	}
	pids := readPIDs(t, pidFile)
	if len(pids) < 3 {
		t.Fatalf("only %d processes started; the cancel came before the servers", len(pids))
	}
	assertNothingLeft(t, tmp, pids)
}

func TestPanicDuringStartLeavesNothing(t *testing.T) {
	tmp := isolate(t)
	bin, pidFile := wrapper(t, "exec "+realServer(t)+` "$@"`)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the progress callback's panic", r)
			}
		}()
		demo.Start(context.Background(), demo.Config{ServerBin: bin, Keys: testKeys, Progress: func(m string) {
			if strings.HasPrefix(m, "preloading") {
				panic("boom")
			}
		}})
	}()
	assertNothingLeft(t, tmp, readPIDs(t, pidFile))
}

func TestBadConfigStartsNothing(t *testing.T) {
	tmp := isolate(t)
	bin, pidFile := wrapper(t, "exec "+realServer(t)+` "$@"`)
	for _, cfg := range []demo.Config{
		{ServerBin: bin, SaveDelay: -1},
		{ServerBin: bin, Scenario: "sideways"},
		{ServerBin: bin, Keys: -5},
		{ServerBin: filepath.Join(t.TempDir(), "no-such-server")},
	} {
		if _, err := demo.Start(context.Background(), cfg); err == nil {
			t.Errorf("started with %+v", cfg)
		}
	}
	if pids := readPIDs(t, pidFile); len(pids) != 0 {
		t.Errorf("bad configurations ran the binary %d times", len(pids))
	}
	assertNothingLeft(t, tmp, nil)
}

func init() {
	// The wrappers need bash and flock.
	for _, tool := range []string{"bash", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			panic("demo tests need " + tool + " on PATH")
		}
	}
}

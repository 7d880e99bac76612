//go:build linux

package main

// The command line's traps, each on the real binary: ctrl+c at a prompt
// and in the UI, ctrl+z and a resize, a mistyped subcommand, the exit
// statuses command by command, and the shell's completions.

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// waitStderr waits until stderr holds text, polling what the process
// wrote; it fails the test after within.
func (s *session) waitStderr(within time.Duration, text string) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(s.stderr.String(), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("no %q on stderr within %s: %q", text, within, s.stderr.String())
		}
		select {
		case <-s.exited:
			s.t.Fatalf("vkwatch exited (%v) before writing %q: %q", s.state, text, s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// listener is a loopback port that counts connections: a test gives its
// address to vkwatch and checks that nothing was dialled.
func listener(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// notDialled fails the test if anyone connected to ln (a connection is in
// the listen queue whether or not it was accepted).
func notDialled(t *testing.T, ln *net.TCPListener) {
	t.Helper()
	ln.SetDeadline(time.Now())
	c, err := ln.Accept()
	if err == nil {
		c.Close()
		t.Error("vkwatch dialled the address it was given")
		return
	}
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatal(err)
	}
}

// TestAskpassCtrlC: ctrl+c at --askpass's prompt ends vkwatch at once,
// with status 130 and the terminal's modes given back, without a line
// of error, and nothing is dialled (before, the process stayed, took
// whatever was typed next for the password and ended "context canceled",
// status 3).
func TestAskpassCtrlC(t *testing.T) {
	ln := listener(t)
	s := startSession(t, childEnv(), "--askpass", ln.Addr().String())
	// The prompt names the user and the server the password is for.
	prompt := "Password for default@" + ln.Addr().String() + ": "
	s.waitStderr(10*time.Second, prompt)
	s.press("\x03")
	if code := s.wait(exitMargin); code != exitInterrupted {
		t.Errorf("exit status %d after ctrl+c at the prompt, want %d; stderr %q", code, exitInterrupted, s.stderr.String())
	}
	if lines := s.stderrLines(); len(lines) != 1 || lines[0] != prompt {
		t.Errorf("stderr %q, want the prompt alone", lines)
	}
	notDialled(t, ln)
}

// TestUICtrlC: ctrl+c in the UI (a key there: the terminal is in raw
// mode) ends vkwatch with status 130, the terminal given back; the full
// help says so, apart from q's plain quit.
func TestUICtrlC(t *testing.T) {
	srv := servertest.StartDefault(t)
	s := startSession(t, childEnv(), srv.Addr)
	s.waitScreen(15*time.Second, "connected and sampling", func(f shot) bool { return connected(f.String()) && sampled(f.String()) })
	s.press("?")
	s.waitScreen(15*time.Second, "the full help telling q from ctrl+c", func(f shot) bool {
		return strings.Contains(f.String(), "q      quit") && strings.Contains(f.String(), "ctrl+c quit now, exit 130")
	})
	s.press("\x03")
	if code := s.wait(exitMargin); code != exitInterrupted {
		t.Errorf("exit status %d after ctrl+c in the UI, want %d; stderr %q", code, exitInterrupted, s.stderr.String())
	}
	s.checkRestored()
	if lines := s.stderrLines(); len(lines) != 0 {
		t.Errorf("stderr %q after ctrl+c, want nothing", lines)
	}
}

// procState is the state letter of /proc/PID/stat (R, S, T for stopped...).
func procState(t *testing.T, pid int) byte {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return b[i+2]
}

// waitState polls the process's state until it is want.
func (s *session) waitState(within time.Duration, want byte) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for procState(s.t, s.pid()) != want {
		if time.Now().After(deadline) {
			s.t.Fatalf("process state %c, want %c within %s\nscreen:\n%s", procState(s.t, s.pid()), want, within, s.scr.snapshot())
		}
		time.Sleep(20 * time.Millisecond) // polling /proc
	}
}

// modes is the terminal's line discipline as vkwatch left it.
func (s *session) modes() uint32 {
	s.t.Helper()
	tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
	if err != nil {
		s.t.Fatal(err)
	}
	return tio.Lflag & (unix.ECHO | unix.ICANON | unix.ISIG)
}

// resize changes the terminal's window, as a person dragging it does
// (the terminal sends SIGWINCH to its foreground job: here the test).
func (s *session) resize(rows, cols int, signal bool) {
	s.t.Helper()
	s.scr.resize(rows, cols)
	if err := unix.IoctlSetWinsize(int(s.ptm.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		s.t.Fatal(err)
	}
	if signal {
		unix.Kill(s.pid(), unix.SIGWINCH)
	}
}

// laidOut reports whether the UI fills a screen of rows rows: its title on
// the first row and its keys on the last, which a view drawn for a taller
// window (its top cut off) or a wider one (cut at the edge) does not have.
func laidOut(rows int) func(shot) bool {
	return func(f shot) bool {
		lines := strings.Split(strings.TrimRight(f.String(), "\n"), "\n")
		return len(lines) == rows && strings.HasPrefix(lines[0], "vkwatch ·") &&
			strings.Contains(lines[rows-1], "q quit") && connected(f.String())
	}
}

// TestSuspendResume: vkwatch started as a shell with job control starts a
// job (a process group of its own in the shell's session). ctrl+z gives
// the terminal back (its modes; the main screen left, with no frame after)
// and stops the job; the window is resized while it is stopped; SIGCONT,
// as fg sends it, takes the terminal again and draws the whole view at the
// window's new size; a resize while it runs redraws it; q quits.
func TestSuspendResume(t *testing.T) {
	srv := servertest.StartDefault(t)
	s := startSessionAttr(t, 40, 120, &unix.SysProcAttr{Setpgid: true}, childEnv(), srv.Addr)
	s.waitScreen(15*time.Second, "the UI at 40x120", laidOut(40))
	raw := s.modes()
	if raw == s.before.Lflag&(unix.ECHO|unix.ICANON|unix.ISIG) {
		t.Fatalf("the terminal is not in raw mode while vkwatch runs (lflag %#x)", raw)
	}
	mark := len(s.raw.String())
	s.press("\x1a")
	s.waitState(10*time.Second, 'T')
	if got, want := s.modes(), s.before.Lflag&(unix.ECHO|unix.ICANON|unix.ISIG); got != want {
		t.Errorf("stopped: terminal modes %#x, want the shell's %#x", got, want)
	}
	waitOutput(t, s, mark, "\x1b[?1049l")
	if rest := s.raw.String()[mark:]; strings.Contains(rest[strings.Index(rest, "\x1b[?1049l"):], "vkwatch") {
		t.Errorf("a frame drawn after the terminal was given back: %q", rest)
	}

	s.resize(30, 100, false) // a stopped job is not the foreground: no SIGWINCH
	unix.Kill(s.pid(), unix.SIGCONT)
	s.waitScreen(15*time.Second, "the UI redrawn whole at 30x100 after SIGCONT", laidOut(30))
	if s.modes() != raw {
		t.Errorf("continued: terminal modes %#x, want raw %#x again", s.modes(), raw)
	}
	s.resize(24, 80, true)
	s.waitScreen(15*time.Second, "the UI redrawn at 24x80 after SIGWINCH", laidOut(24))
	s.quit()
}

// waitOutput waits until what vkwatch wrote after mark holds text.
func waitOutput(t *testing.T, s *session, mark int, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.raw.String()[mark:], text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output within 10s: %q", text, s.raw.String()[mark:])
		}
		time.Sleep(20 * time.Millisecond) // polling what the reader took
	}
}

// TestSuspendWithoutJobControl: vkwatch as a session leader (ssh host
// vkwatch, docker run -t, setsid), whose stop no shell could continue: the
// kernel would discard it and a suspend would wait for ever. ctrl+z does
// nothing and the UI goes on answering keys.
func TestSuspendWithoutJobControl(t *testing.T) {
	srv := servertest.StartDefault(t)
	s := startSession(t, childEnv(), srv.Addr)
	s.waitScreen(15*time.Second, "connected and sampling", func(f shot) bool { return connected(f.String()) && sampled(f.String()) })
	s.press("\x1a")
	s.press("p")
	s.waitScreen(5*time.Second, "paused after ctrl+z", func(f shot) bool { return strings.Contains(f.String(), "PAUSED") })
	if st := procState(t, s.pid()); st == 'T' {
		t.Errorf("vkwatch stopped (%c) though no shell can continue it", st)
	}
	s.quit()
}

// TestMistypedCommand: a near miss of a subcommand is answered before
// anything is dialled, with status 2; what the rule lets through (a bare
// word far from every subcommand) is dialled as a server.
func TestMistypedCommand(t *testing.T) {
	ln := listener(t)
	for _, tt := range []struct{ typed, want string }{
		{"reprot", `vkwatch: unknown command "reprot": did you mean report? (a server named reprot: write reprot:6379)`},
		{"bnch", `vkwatch: unknown command "bnch": did you mean bench? (a server named bnch: write bnch:6379)`},
		{"recrding", `vkwatch: unknown command "recrding": did you mean recording? (a server named recrding: write recrding:6379)`},
	} {
		code, _, stderr := runVKWatch(t, 30*time.Second, tt.typed, "r.jsonl", ln.Addr().String())
		if code != exitUsage || strings.TrimRight(stderr, "\n") != tt.want {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tt.typed, code, stderr, exitUsage, tt.want)
		}
	}
	notDialled(t, ln)
	// localhost is no near miss: it is watched (here: headless, refused).
	port := strconv.Itoa(servertest.FreePort(t))
	code, _, stderr := runVKWatch(t, 30*time.Second, "--headless", "--record", filepath.Join(t.TempDir(), "r.jsonl"), "--connect-timeout", connectTimeout.String(), "localhost:"+port)
	if code != exitConnect || !strings.Contains(stderr, "localhost:"+port+": connection refused") {
		t.Errorf("localhost: exit %d, stderr %q; want %d and connection refused", code, stderr, exitConnect)
	}
}

// recordHeadless records srv without a terminal into a new file until sig
// and returns the file and the exit status.
func recordHeadless(t *testing.T, srv *server.Server, sig unix.Signal) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	h := startHeadless(t, "--record", path, srv.Addr)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(h.stderr.String(), "without the UI") {
		if time.Now().After(deadline) {
			t.Fatalf("the headless recording did not start: %q", h.stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling what the process wrote
	}
	h.cmd.Process.Signal(sig)
	select {
	case err := <-h.done:
		h.ended = true
		return path, exitCode(err)
	case <-time.After(exitMargin):
		t.Fatalf("the headless recording did not end on %v", sig)
	}
	return "", 0
}

// TestExitStatusTable checks the table --help prints, command by command,
// on the real binary: every status it lists is the one a case of it
// gets, and every status the cases get is in the table.
func TestExitStatusTable(t *testing.T) {
	srv := servertest.StartDefault(t)
	rec, code := recordHeadless(t, srv, unix.SIGINT)
	if code != exitInterrupted {
		t.Errorf("a headless recording ended by SIGINT (ctrl+c): exit %d, want %d", code, exitInterrupted)
	}
	if _, code := recordHeadless(t, srv, unix.SIGTERM); code != exitOK {
		t.Errorf("a headless recording ended by SIGTERM: exit %d, want %d", code, exitOK)
	}
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.jsonl")
	if err := os.WriteFile(existing, []byte("the user's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	free := "127.0.0.1:" + strconv.Itoa(servertest.FreePort(t))
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, exitOK}, {[]string{"--version"}, exitOK}, {[]string{"report", "-h"}, exitOK},
		{[]string{"--bogus"}, exitUsage}, {[]string{"reprot", rec}, exitUsage}, {[]string{"-h"}, exitUsage},
		{[]string{"--record-format", "json", free}, exitUsage},
		{[]string{"--headless", "--record", filepath.Join(dir, "x.jsonl"), free}, exitConnect}, {[]string{free}, exitNoTTY},
		{[]string{"demo", "-p", "1"}, exitUsage}, {[]string{"demo", "extra"}, exitUsage}, {[]string{"demo"}, exitNoTTY},
		{[]string{"load"}, exitUsage}, {[]string{"load", free}, exitConnect},
		{[]string{"bench", "--runs", "0", free}, exitUsage}, {[]string{"bench", "--runs", "1", free}, exitConnect},
		{[]string{"save"}, exitUsage}, {[]string{"save", free}, exitConnect},
		{[]string{"replay"}, exitUsage}, {[]string{"replay", "/etc/passwd"}, exitUsage}, {[]string{"replay", rec}, exitNoTTY},
		{[]string{"recording"}, exitUsage}, {[]string{"recording", "/etc/passwd"}, exitUsage}, {[]string{"recording", rec}, exitOK},
		{[]string{"recording", rec, "--from", "+0s", "-o", existing}, exitUsage},
		{[]string{"recording", rec, "--from", "+0s", "-o", filepath.Join(dir, "no", "such", "dir", "cut.jsonl")}, exitError},
		{[]string{"report"}, exitUsage}, {[]string{"report", "/etc/passwd", "-o", filepath.Join(dir, "p.html")}, exitUsage},
		{[]string{"report", rec, "-o", filepath.Join(dir, "no", "such", "dir", "p.html")}, exitError},
		{[]string{"report", rec, "-o", filepath.Join(dir, "p.html")}, exitOK},
		{[]string{"completion", "bsh"}, exitUsage}, {[]string{"completion", "bash"}, exitOK},
		{[]string{"metrics", "dashbord"}, exitUsage}, {[]string{"metrics", "rules"}, exitOK},
	}
	seen := map[int]bool{exitInterrupted: true, exitOK: true}
	for _, c := range cases {
		code, _, stderr := runVKWatch(t, 60*time.Second, c.args...)
		seen[code] = true
		if code != c.code {
			t.Errorf("vkwatch %s: exit %d, want %d; stderr %q", strings.Join(c.args, " "), code, c.code, stderr)
		}
		if code == exitUsage && !strings.HasPrefix(stderr, "vkwatch: ") {
			t.Errorf("vkwatch %s: usage error %q, want one line starting vkwatch:", strings.Join(c.args, " "), stderr)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "the user's file" {
		t.Errorf("recording -o overwrote an existing file: %q", b)
	}
	_, help, _ := runVKWatch(t, 30*time.Second, "--help")
	var listed []int
	for _, line := range strings.Split(help[strings.Index(help, "Exit status:"):], "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 {
			n, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatalf("--help's exit status table: %q", line)
			}
			listed = append(listed, n)
		}
	}
	for code := range seen {
		if !slices.Contains(listed, code) {
			t.Errorf("exit status %d happens but --help does not list it (%v)", code, listed)
		}
	}
	for _, code := range listed {
		if !seen[code] {
			t.Errorf("--help lists exit status %d, which no case checks", code)
		}
	}
}

// complete runs the shell's completion request for args (the last one
// the word being completed) and returns the candidates and cobra's
// directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, stderr := runVKWatch(t, 30*time.Second, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d, %s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %q: no directive: %q", args, out)
	}
	return lines[:len(lines)-1], last
}

// TestCompletion: what the shell completes (vkwatch completion bash|zsh|
// fish asks the binary itself): recordings by their extensions, formats
// and scenarios by name, directories for --figures, schemes for -u,
// nothing for hosts, numbers and durations; subcommands and help as
// cobra's.
func TestCompletion(t *testing.T) {
	const (
		noFile  = ":4"  // ShellCompDirectiveNoFileComp
		exts    = ":8"  // ShellCompDirectiveFilterFileExt
		dirs    = ":16" // ShellCompDirectiveFilterDirs
		noSpace = ":6"  // NoFileComp | NoSpace
		files   = ":0"  // the shell's own file completion
	)
	for _, tt := range []struct {
		args []string
		want []string
		dir  string
	}{
		{[]string{"replay", ""}, []string{"jsonl", "zst", "gz"}, exts},
		{[]string{"recording", "x.jsonl", "-o", ""}, []string{"jsonl", "zst", "gz"}, exts},
		{[]string{"report", ""}, []string{"jsonl", "zst", "gz", "json"}, exts},
		{[]string{"report", "x.jsonl", "-o", ""}, []string{"html"}, exts},
		{[]string{"report", "x.jsonl", "--figures", ""}, nil, dirs},
		{[]string{"--record", ""}, []string{"jsonl", "zst", "gz", "csv"}, exts},
		{[]string{"--record-format", ""}, []string{"jsonl", "csv"}, noFile},
		{[]string{"demo", "--scenario", ""}, []string{"auto", "fork-vs-forkless", "idle-vs-load"}, noFile},
		{[]string{"save", "--report", ""}, []string{"json"}, exts},
		{[]string{"-u", ""}, []string{"redis://", "rediss://", "valkey://", "valkeys://"}, noSpace},
		{[]string{"-h", ""}, nil, noFile},
		{[]string{"bench", "--interval", ""}, nil, noFile},
		{[]string{"load", "--keys", ""}, nil, noFile},
		{[]string{"--cacert", ""}, nil, files},
		{[]string{"--cacertdir", ""}, nil, dirs},
		{[]string{"rep"}, []string{"replay\tReplay a recording in the monitor (space pause, arrows seek)", "report\tTurn recordings, save reports and bench --json results into one self-contained HTML page"}, noFile},
	} {
		got, dir := complete(t, tt.args...)
		if !slices.Equal(got, tt.want) || dir != tt.dir {
			t.Errorf("vkwatch %s<TAB>: %q %s, want %q %s", strings.Join(tt.args, " "), got, dir, tt.want, tt.dir)
		}
	}
	// The help of a command without connection flags is -h too; with them,
	// -h is the host, and only --help is help.
	if got, _ := complete(t, "report", "-"); !slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "-h\t") }) {
		t.Errorf("report's flags %q: no -h (help)", got)
	}
	if got, _ := complete(t, "--hel"); !slices.Equal(got, []string{"--help\thelp for vkwatch (-h is the host)"}) {
		t.Errorf("--hel<TAB>: %q", got)
	}
}

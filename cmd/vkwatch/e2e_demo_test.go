//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// children returns the pids of the direct children of pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// alive reports whether pid is a process that has not ended (a zombie
// waiting for its new parent to reap it has ended).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// demoServers starts `vkwatch demo` small and returns the session and its
// two servers' pids and directories, once both panes are sampling.
func demoServers(t *testing.T) (*session, []int, []string) {
	t.Helper()
	s := startSession(t, childEnv(), "demo", "--keys", "2000", "--writers", "1")
	s.waitScreen(30*time.Second, "the demo's two panes sampling", func(f shot) bool {
		l, r := leftPane(f), rightPane(f)
		return connected(l) && connected(r) && sampled(l) && sampled(r)
	})
	var pids []int
	var dirs []string
	for _, pid := range children(t, s.pid()) {
		// comm, not cmdline: the server rewrites its process title.
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if !strings.HasSuffix(strings.TrimSpace(string(comm)), "-server") {
			continue
		}
		dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err != nil {
			t.Fatal(err)
		}
		pids, dirs = append(pids, pid), append(dirs, dir)
	}
	if len(pids) != 2 {
		t.Fatalf("the demo runs %d server processes, want 2 (children %v)", len(pids), children(t, s.pid()))
	}
	return s, pids, dirs
}

func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("server process %d outlived vkwatch", pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond) // polling /proc
		}
	}
}

// TestDemoLeavesNothing: quitting the demo stops its servers and removes
// their directories; a SIGKILLed vkwatch takes its servers with it.
func TestDemoLeavesNothing(t *testing.T) {
	s, pids, dirs := demoServers(t)
	s.quit()
	waitGone(t, pids)
	for _, d := range dirs {
		if fileExists(d) {
			t.Errorf("the demo left its directory %s", d)
			os.RemoveAll(d)
		}
	}

	s, pids, dirs = demoServers(t)
	t.Cleanup(func() {
		for _, d := range dirs {
			os.RemoveAll(d) // nothing can clean up after SIGKILL
		}
	})
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.waitKilled(10 * time.Second)
	waitGone(t, pids)
}

package nodefile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func addrs(eps []source.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, ep.String())
	}
	return out
}

func TestDecode(t *testing.T) {
	data := "# the fleet\n\n10.0.0.7:6379\n  10.0.0.8   # port 6379\nrediss://watcher:pw@cache-3.internal:6380\n/run/valkey.sock\n"
	eps, err := Decode("nodes.txt", []byte(data), source.ParseAddress)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.7:6379", "10.0.0.8:6379", "rediss://watcher@cache-3.internal:6380", "/run/valkey.sock"}
	if got := addrs(eps); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDecodeErrorsNameFileAndLine(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"10.0.0.7:6379\n\n10.0.0.8:99999\n", `nodes.txt:3: address "10.0.0.8:99999": bad port`},
		{"10.0.0.7:6379\n10.0.0.7\n", "nodes.txt:2: 10.0.0.7:6379 is given twice (first on line 1)"},
		{"# nothing yet\n\n", "nodes.txt: no address in it"},
		{"valkey://:secret@h:1 x\n", `nodes.txt:1: address "valkey://:xxxxx@h:1 x"`},
	} {
		_, err := Decode("nodes.txt", []byte(c.data), source.ParseAddress)
		var fe *Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.data, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows a password: %v", err)
		}
	}
}

// A file that is not there is named once, with the reason.
func TestReadMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nodes.txt")
	_, err := Read(p, source.ParseAddress)
	if want := p + ": no such file or directory"; err == nil || err.Error() != want || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want %q (and os.ErrNotExist)", err, want)
	}
}

func TestReadRefusesAHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p, source.ParseAddress); err == nil || !strings.Contains(err.Error(), "not a nodes file") {
		t.Errorf("err = %v", err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none"), source.ParseAddress); err == nil {
		t.Error("a missing file: no error")
	}
}

// write replaces path's contents the way an editor saves: a new file
// renamed over the old one.
func write(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.txt")
	write(t, path, "127.0.0.1:7001\n127.0.0.1:7002\n")
	l, err := Read(path, source.ParseAddress)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	applied, failed := make(chan []string, 10), make(chan string, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Follow(ctx, path, 5*time.Millisecond, source.ParseAddress, l,
			func(eps []source.Endpoint) { applied <- addrs(eps) },
			func(err error) { failed <- err.Error() })
	}()
	defer func() { cancel(); <-done }()
	next := func(ch chan []string) []string {
		select {
		case v := <-ch:
			return v
		case <-time.After(10 * time.Second):
			t.Fatal("no change seen")
		}
		return nil
	}
	nextErr := func() string {
		select {
		case v := <-failed:
			return v
		case <-time.After(10 * time.Second):
			t.Fatal("no failure seen")
		}
		return ""
	}

	// One joins, one leaves.
	write(t, path, "127.0.0.1:7002\n127.0.0.1:7003 # new\n")
	if got := next(applied); !slices.Equal(got, []string{"127.0.0.1:7002", "127.0.0.1:7003"}) {
		t.Errorf("applied %q", got)
	}
	// A bad line: said once, with file and line; nothing applied.
	write(t, path, "127.0.0.1:7002\nnot a host:1\n")
	if e := nextErr(); !strings.HasSuffix(strings.SplitN(e, ": ", 2)[0], "nodes.txt:2") {
		t.Errorf("failure %q does not name nodes.txt:2", e)
	}
	// Back to the list in force: applied again, which clears the failure.
	write(t, path, "127.0.0.1:7002\n127.0.0.1:7003 # new\n")
	if got := next(applied); !slices.Equal(got, []string{"127.0.0.1:7002", "127.0.0.1:7003"}) {
		t.Errorf("applied %q", got)
	}
	// Emptied (a writer that truncates first): refused, not every node gone.
	write(t, path, "")
	if e := nextErr(); !strings.Contains(e, "no address") {
		t.Errorf("failure %q", e)
	}
	// Good again: applied.
	write(t, path, "127.0.0.1:7004\n")
	if got := next(applied); !slices.Equal(got, []string{"127.0.0.1:7004"}) {
		t.Errorf("applied %q", got)
	}
	select {
	case e := <-failed:
		t.Errorf("a failure more: %s", e)
	case got := <-applied:
		t.Errorf("applied more: %q", got)
	default:
	}
}

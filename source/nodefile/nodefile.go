// Package nodefile reads a nodes file (--nodes FILE): the servers of a
// fleet, one address or URL a line, the way Prometheus' file-based
// discovery names its targets, and follows it while it changes.
//
//	# comments start with '#', anywhere on a line
//	10.0.0.7:6379
//	10.0.0.8            # port 6379
//	rediss://watcher@cache-3.internal:6380
//
// Every line is checked by the caller's parse function (the same rules as
// an address on the command line); a bad line is an error naming the file
// and the line, and so is an address given twice or a file of no address.
package nodefile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// MaxSize bounds what is read of a nodes file: far more than the
// addresses of any fleet vkwatch can watch (2,000 URLs of 100 bytes are
// 200 KB), small enough that a wrong file (a log, a dump) is refused
// before it reaches memory.
const MaxSize = 4 << 20

// Parse reads one line's address into an endpoint (credentials and TLS
// applied), or says why it cannot.
type Parse func(addr string) (source.Endpoint, error)

// Error is a nodes file that cannot be used: File and Line (0 when the
// error is the file's as a whole) say where.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	name := inert.Text(e.File)
	// The file is named once: "nodes.txt: no such file or directory", not
	// "nodes.txt: stat nodes.txt: no such file or directory".
	err := e.Err
	if pe, ok := err.(*fs.PathError); ok && pe.Path == e.File {
		err = pe.Err
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", name, e.Line, err)
	}
	return fmt.Sprintf("%s: %v", name, err)
}

func (e *Error) Unwrap() error { return e.Err }

// List is a nodes file as read: its endpoints, and what Follow compares
// to see a change.
type List struct {
	Endpoints []source.Endpoint
	state     fileState
	sum       [32]byte
}

// Read reads and checks the nodes file at path.
func Read(path string, parse Parse) (List, error) {
	// Looked at before it is read: a change in between is seen by the
	// next look.
	st, err := stat(path)
	if err != nil {
		return List{}, &Error{File: path, Err: err}
	}
	data, err := readBounded(path)
	if err != nil {
		return List{}, &Error{File: path, Err: err}
	}
	eps, err := Decode(path, data, parse)
	if err != nil {
		return List{}, err
	}
	return List{Endpoints: eps, state: st, sum: sha256.Sum256(data)}, nil
}

// readBounded reads at most MaxSize bytes of path; a larger file is an
// error.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("larger than %d MiB: not a nodes file", MaxSize>>20)
	}
	return data, nil
}

// Decode checks the contents of a nodes file named name.
func Decode(name string, data []byte, parse Parse) ([]source.Endpoint, error) {
	var eps []source.Endpoint
	seen := map[source.NodeID]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		ep, err := parse(line)
		if err != nil {
			return nil, &Error{File: name, Line: n, Err: err}
		}
		if first, dup := seen[ep.Node()]; dup {
			return nil, &Error{File: name, Line: n, Err: fmt.Errorf("%s is given twice (first on line %d)", ep, first)}
		}
		seen[ep.Node()] = n
		eps = append(eps, ep)
	}
	if len(eps) == 0 {
		return nil, &Error{File: name, Err: errors.New("no address in it (one address or URL a line, # for comments)")}
	}
	return eps, nil
}

// Follow re-reads the nodes file at path when it changes (its size,
// modification time or inode, looked at every poll; then its contents
// compared) until ctx ends, from the list in force (Read's). Each new list
// that reads well goes to apply; a file that does not goes to fail, once
// until it changes again, and the list in force stays: a file caught half
// written is read again once its writer is done.
func Follow(ctx context.Context, path string, poll time.Duration, parse Parse, from List,
	apply func([]source.Endpoint), fail func(error)) {
	seen, sum := from.state, from.sum
	t := time.NewTicker(poll)
	defer t.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := stat(path)
		if err == nil && st == seen {
			continue
		}
		seen = st
		var eps []source.Endpoint
		if err == nil {
			var data []byte
			if data, err = readBounded(path); err == nil {
				s := sha256.Sum256(data)
				if s == sum && lastErr == "" {
					continue // touched, not changed
				}
				if eps, err = Decode(path, data, parse); err == nil {
					sum = s
				}
			}
		}
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				err = &Error{File: path, Err: err}
			}
			if err.Error() != lastErr {
				lastErr = err.Error()
				fail(err)
			}
			continue
		}
		lastErr = ""
		apply(eps)
	}
}

// fileState is what tells a file changed without reading it.
type fileState struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func stat(path string) (fileState, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}, err
	}
	return fileState{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi)}, nil
}

package record

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func testHeader(epoch time.Time) Header {
	return Header{VKWatch: "test", Epoch: epoch, Settings: map[string]string{"interval": "200ms"},
		Servers: []ServerInfo{{Node: "n1", Addr: "127.0.0.1:7000"}}}
}

// writeAll writes evs as a plain recording of format f and returns its
// bytes.
func writeAll(t testing.TB, f Format, h Header, evs []source.Event) []byte {
	t.Helper()
	return writeAllAs(t, Options{Format: f}, h, evs)
}

func writeAllAs(t testing.TB, o Options, h Header, evs []source.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readComplete reads data, which must be a whole recording.
func readComplete(t testing.TB, data []byte) *Recording {
	t.Helper()
	rec, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Truncated {
		t.Fatalf("whole recording read as cut short: %s", rec.Why)
	}
	return rec
}

// syncBuffer is a bytes.Buffer a Writer's flusher and a test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

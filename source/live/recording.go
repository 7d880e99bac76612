package live

import (
	"errors"
	"fmt"
	"os"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

// Recording is a --record file being written, by the monitor, save or
// bench.
type Recording struct {
	f *os.File
	w *record.Writer
}

// Record creates path and writes h, the header: the run clock's epoch,
// the settings and the servers (display addresses only: never a
// password), and what made it (VKWatch); its format and version are the
// writer's.
func Record(path string, format record.Format, h record.Header) (*Recording, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	// The name chooses the compression: night.jsonl.zst is zstd.
	h.Format, h.Version = record.FormatName, record.Version
	w, err := record.NewWriter(f, h, record.Options{Format: format, Compression: record.CompressionFor(path)})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--record: %w", err)
	}
	return &Recording{f: f, w: w}, nil
}

// Write records one event; the writer flushes at least every second.
func (r *Recording) Write(ev source.Event) { r.w.Write(ev) }

// Close flushes what is left and closes the file; a failure of either
// (a full disk) is the user's news: the recording is incomplete.
func (r *Recording) Close() error {
	if err := errors.Join(r.w.Close(), r.f.Close()); err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	return nil
}

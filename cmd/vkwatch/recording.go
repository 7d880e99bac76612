package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

// recording is a --record file being written, by the monitor or by bench.
type recording struct {
	f *os.File
	w *record.Writer
}

// openRecording creates path and writes the header: the run clock's epoch,
// the settings and the servers (display addresses only: never a password).
func openRecording(path string, format record.Format, epoch time.Time, settings map[string]string, servers []record.ServerInfo) (*recording, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	// The name chooses the compression: night.jsonl.zst is zstd.
	w, err := record.NewWriter(f, record.Header{
		Format:   record.FormatName,
		Version:  record.Version,
		VKWatch:  vkwatchVersion(),
		Epoch:    epoch,
		Settings: settings,
		Servers:  servers,
	}, record.Options{Format: format, Compression: record.CompressionFor(path)})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--record: %w", err)
	}
	return &recording{f: f, w: w}, nil
}

// Write records one event; the writer flushes at least every second.
func (r *recording) Write(ev source.Event) { r.w.Write(ev) }

// Close flushes what is left and closes the file; a failure of either
// (a full disk) is the user's news: the recording is incomplete.
func (r *recording) Close() error {
	if err := errors.Join(r.w.Close(), r.f.Close()); err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	return nil
}

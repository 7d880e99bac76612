package live

import (
	"fmt"
	"os"
	"sync"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

// Reports keeps the save reports of a run's events for --report (the
// monitor's and vkwatch save's); events come from several goroutines at
// once.
type Reports struct {
	mu      sync.Mutex
	reports []source.SaveReport
}

// Observe keeps ev's report when ev is the end of a save.
func (l *Reports) Observe(ev source.Event) {
	if ev.Kind == source.EventSaveEnded && ev.Report != nil {
		l.mu.Lock()
		l.reports = append(l.reports, *ev.Report)
		l.mu.Unlock()
	}
}

// Write writes the reports kept so far to path as JSON.
func (l *Reports) Write(path string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, err := record.MarshalReports(l.reports)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

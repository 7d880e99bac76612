package ui

import (
	"time"
)

// What a model driven from outside (a replay, ui/replay) is told besides
// its events, as messages, and what it says of itself.

// StatusMsg sets the status at the right of the title line: a replay's
// playback position.
type StatusMsg string

// ResetMsg empties the history the model folded from events (the store,
// the command answers in the footer) from the offset it gives on, for a
// replay that feeds it again from elsewhere; the views, focus and scales
// stay as the user left them.
type ResetMsg time.Duration

// Keep is how far back the model keeps history now: a replay reads that
// much of a recording before the time it seeks to.
func (m Model) Keep() time.Duration { return m.keepFor() }

// resetHistory empties the history from from on (ResetMsg).
func (m *Model) resetHistory(from time.Duration) {
	m.store.Reset(from)
	m.footer, m.clock = nil, 0
	m.refresh()
}

package ui

import (
	"time"
)

// What a model driven from outside (a replay, ui/replay) is told besides
// its events, as messages (what it says of itself, Model.Keep, is in
// model.go).

// StatusMsg sets the status at the right of the title line: a replay's
// playback position.
type StatusMsg string

// ResetMsg empties the history the model folded from events (the store,
// the command answers in the footer) from the offset it gives on, for a
// replay that feeds it again from elsewhere; the views, focus and scales
// stay as the user left them.
type ResetMsg time.Duration

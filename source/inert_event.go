package source

import (
	"reflect"

	"github.com/vkwatch/vkwatch/source/inert"
)

// eventWalker escapes every string of an event except node ids: they are
// the keys panes, rows and commands are found by, and stay as the server
// or the user gave them (they are shown through inert.Text).
var eventWalker = inert.NewWalker(reflect.TypeFor[NodeID]())

// Inert returns v (an Event, a Topology, a SaveReport...) with every
// string it carries (INFO fields, CONFIG GET values, addresses, replies,
// errors, topology hostnames, report fields) made displayable by
// inert.Text, except node ids. It copies on write: a clean value comes
// back as it is, and v and what it points to are never changed (the
// recorder keeps the server's exact text). The UI calls it on every event
// it takes in.
func Inert[T any](v T) T { return inert.Walk(eventWalker, v) }

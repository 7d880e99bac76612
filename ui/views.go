package ui

import "slices"

// Which view is open is one value: a stack of views. Its bottom is the
// base, what the charts are drawn in (the panes of the servers shown, or
// a fleet's rows); above it, in the order they were opened, the views
// over it: the reports table or the cost curves in the base's place (at
// most one of them), and the full help, which takes the bottom lines.
// esc closes the top one, so the help opened over the table closes
// before the table, and the table opened over the help before the help.

// viewID names a view.
type viewID int

const (
	viewPanes viewID = iota // the panes of the servers shown (a base)
	viewFleet               // a fleet's rows, one per node (a base)
	viewTable               // the save reports, in the base's place
	viewCost                // the save cost curves, in the base's place
	viewHelp                // the full help, in the help line's place
)

// viewStack is the views open, the base first. It is never empty.
type viewStack []viewID

// base is the view the charts are drawn in.
func (s viewStack) base() viewID { return s[0] }

// top is the view opened last: the one esc closes.
func (s viewStack) top() viewID { return s[len(s)-1] }

// body is the view whose lines fill the screen between the title line
// and the footer: the topmost one but the help.
func (s viewStack) body() viewID {
	for i := len(s) - 1; i > 0; i-- {
		if s[i] != viewHelp {
			return s[i]
		}
	}
	return s[0]
}

// covered reports whether the base is hidden behind another view: its
// charts then wait, and closing that view draws them.
func (s viewStack) covered() bool { return s.body() != s.base() }

// has reports whether v is open.
func (s viewStack) has(v viewID) bool { return slices.Contains(s, v) }

// without returns the stack without v (never without its base).
func (s viewStack) without(v viewID) viewStack {
	return append(s[:1:1], slices.DeleteFunc(slices.Clone(s[1:]), func(o viewID) bool { return o == v })...)
}

// toggle closes v if it is open, else opens it on top. A view in the
// base's place (table, cost) replaces the other one.
func (s viewStack) toggle(v viewID) viewStack {
	if s.has(v) {
		return s.without(v)
	}
	if v == viewTable || v == viewCost {
		s = s.without(viewTable).without(viewCost)
	}
	return append(slices.Clone(s), v)
}

// withBase returns the stack on another base, the views over it kept.
func (s viewStack) withBase(b viewID) viewStack {
	out := slices.Clone(s)
	out[0] = b
	return out
}

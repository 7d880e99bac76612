package ui

import (
	"slices"

	"github.com/vkwatch/vkwatch/ui/costview"
	"github.com/vkwatch/vkwatch/ui/fleetview"
	"github.com/vkwatch/vkwatch/ui/helpview"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/tableview"
	"github.com/vkwatch/vkwatch/ui/view"
)

// Which view is open is one value: a stack of views. Its bottom is the
// base, what the charts are drawn in (the panes of the servers shown, or
// a fleet's rows); above it, in the order they were opened, the views
// over it: the reports table or the cost curves in the base's place (at
// most one of them), and the full help, which takes the bottom lines.
// esc closes the top one, so the help opened over the table closes
// before the table, and the table opened over the help before the help.

// viewID names a view: its place in the views table below.
type viewID int

// The views the model itself opens and closes by name. A view opened
// only by its own key needs no name: its place in the table is its id.
const (
	viewFleet viewID = iota // a fleet's rows, one per node (a base)
	viewPanes               // the panes of the servers shown (a base)
	viewCost                // the save cost curves, in the base's place
	viewTable               // the save reports, in the base's place
	viewHelp                // the full help, in the help line's place
)

// viewKind says where a view goes on the screen.
type viewKind int

const (
	kindBase viewKind = iota // the charts' view: at the bottom of the stack
	kindBody                 // in the base's place, one at a time
	kindFoot                 // in the help line's place
)

// viewOpts is what the views are made for: the panes, and a fleet's view
// of its rows (nil outside a fleet), which the model also keeps.
type viewOpts struct {
	panes *panesview.Model
	fleet *fleetview.Model
}

// views is every view the model can show, by id, in the order the full
// help lists their keys: its name (what the others' help lines call its
// toggle), where it goes, and how it is made (nil for a view this model
// has not: the fleet's rows outside a fleet). A new view is a package with
// its component (view.Component) and one line here.
var views = [...]struct {
	name view.Name
	kind viewKind
	make func(o viewOpts) view.Component
}{
	viewFleet: {view.Fleet, kindBase, newFleetComponent},
	viewPanes: {view.Panes, kindBase, func(o viewOpts) view.Component { return o.panes }},
	viewCost:  {view.Cost, kindBody, func(viewOpts) view.Component { return costview.New() }},
	viewTable: {view.Reports, kindBody, func(viewOpts) view.Component { return tableview.New() }},
	viewHelp:  {view.Help, kindFoot, func(viewOpts) view.Component { return helpview.New() }},
}

// newFleetComponent returns the fleet view of a fleet's model, and no
// view otherwise.
func newFleetComponent(o viewOpts) view.Component {
	if o.fleet == nil {
		return nil
	}
	return o.fleet
}

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
// base's place replaces the one there.
func (s viewStack) toggle(v viewID) viewStack {
	if s.has(v) {
		return s.without(v)
	}
	if views[v].kind == kindBody {
		if b := s.body(); b != s.base() {
			s = s.without(b)
		}
	}
	return append(slices.Clone(s), v)
}

// withBase returns the stack on another base, the views over it kept.
func (s viewStack) withBase(b viewID) viewStack {
	out := slices.Clone(s)
	out[0] = b
	return out
}

package ui

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// sgr matches the Select Graphic Rendition sequences lipgloss writes for
// vkwatch's own styles: the only escape sequences a frame may hold.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// poison appends s to every string reachable from v (node ids included),
// as a hostile server or recording would fill them.
func poison(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + s)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			poison(v.Elem(), s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				poison(v.Field(i), s)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			poison(v.Index(i), s)
		}
	case reflect.Map:
		// none in events
	}
}

// checkFrame fails when a frame, once lipgloss's own SGR sequences are
// removed, holds an escape or any other control, or is not UTF-8.
func checkFrame(t *testing.T, what, frame string) {
	t.Helper()
	rest := sgr.ReplaceAllString(frame, "")
	if !utf8.ValidString(rest) {
		t.Fatalf("%s: the frame is not valid UTF-8", what)
	}
	for i, r := range rest {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("%s: the frame holds %U at byte %d: ...%q...", what, r, i, rest[max(i-40, 0):min(i+40, len(rest))])
		}
	}
}

// FuzzModelFrame feeds Models (two panes, then a fleet) events whose every
// string, node ids and the configured addresses included, ends with the
// fuzzed text, and checks each frame: the reports table, the cost view,
// the help and the fleet's rows and panes too.
func FuzzModelFrame(f *testing.F) {
	for _, s := range []string{
		"",
		"\x1b]0;PWNED\x07\x1b[31mred",
		"\x1b]52;c;cHduZWQ=\x07",
		"\u009b2J\u009d0;x\u009c",
		"\xff\xfe\xc2",
		"\r\n\t\b\x00\x7f",
		"\u202eevil",
		strings.Repeat("\x1b[", 400),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lipgloss.SetColorProfile(termenv.TrueColor)
		defer lipgloss.SetColorProfile(termenv.Ascii)

		evs := uitest.Scenario(2, 40*time.Second)
		evs = append(evs,
			commandEvent(0, 36*time.Second, "BGSAVE", "", "ERR refused"),
			commandEvent(1, 36*time.Second, "BGSAVE", "Background saving started", ""),
			source.Event{Node: uitest.NodeOf(1), Kind: source.EventDisconnected, Offset: 39 * time.Second, Err: "ERR gone"})
		for i := range evs {
			poison(reflect.ValueOf(&evs[i]).Elem(), s)
		}
		ns := nodes(uitest.AddrA, uitest.AddrB)
		poison(reflect.ValueOf(ns), s)
		m := sized(New(Config{Nodes: ns, Now: uitest.FixedNow, Banner: "banner" + s, Send: func(source.NodeID, ...string) {}}), 120, 40)
		m = feed(t, m, evs)
		checkFrame(t, "two panes", m.View())
		for _, k := range []string{"r", "r", "c", "c", "?", "?", "tab"} {
			m, _ = press(m, k)
			checkFrame(t, "two panes after "+k, m.View())
		}

		top := uitest.FleetTopo()
		poison(reflect.ValueOf(&top).Elem(), s)
		fevs := uitest.FleetScenario(30 * time.Second)
		for i := range fevs {
			poison(reflect.ValueOf(&fevs[i]).Elem(), s)
		}
		fns := fleetNodes()
		poison(reflect.ValueOf(fns), s)
		fm := sized(New(Config{Nodes: fns, Topology: &top, Now: uitest.FixedNow, Send: func(source.NodeID, ...string) {}}), 160, 40)
		fm = feed(t, fm, fevs)
		checkFrame(t, "the fleet", fm.View())
		for _, k := range []string{"o", "enter", "r", "r", "esc"} {
			fm, _ = press(fm, k)
			checkFrame(t, "the fleet after "+k, fm.View())
		}
	})
}

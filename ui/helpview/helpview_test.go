package helpview

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"

	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

func TestViewAloneHelp(t *testing.T) {
	g := view.NewKeys()
	v := New()
	v.SetSize(80, 0)
	v.SyncKeys(view.Open{})
	c := viewtest.Context(nil)
	c.Help = view.KeyHelp{Short: []key.Binding{g.Save, g.Both, g.Pause, *v.Toggle(), g.Quit, g.Rewrite, g.Cancel}}
	short := v.View(c)
	// A key waiting to be pressed again takes the line, whatever the keys.
	c.Prompt = view.Prompt{Key: "x", What: "send BGSAVE CANCEL", Other: "keep it"}
	asked := v.View(c)
	// The full help: its columns, and ? says it closes it.
	v.SyncKeys(view.Open{Help: true})
	c.Prompt, c.Full = view.Prompt{}, true
	c.Help.Full = [][]key.Binding{{g.Save, g.Rewrite, g.SaveAll, g.RewriteAll, g.Cancel}, {g.Scale, g.Close, g.Pause, g.Shot, *v.Toggle(), g.Quit}}
	full := v.View(c)
	viewtest.Golden(t, append(append(short, asked...), full...))
	// The cache follows what is drawn: a label that changes redraws.
	g.Pause.SetHelp("p", "resume")
	c.Help.Full[1][2] = g.Pause
	if again := v.View(c); !strings.Contains(strings.Join(again, "\n"), "resume") {
		t.Errorf("the help kept a stale label:\n%s", strings.Join(again, "\n"))
	}
}

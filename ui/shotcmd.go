package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/ui/shot"
)

// shotMsg says where S wrote the screen, or why it could not.
type shotMsg struct {
	path string
	err  error
}

// shotCmd writes frame, the screen as it is, as an SVG picture named by
// the time into dir ("" the current directory). The rendering and the
// file are the command's, out of Update; a name already taken gets -2,
// -3..., never overwriting a file.
func shotCmd(frame string, cols, rows int, dir string, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		t := now()
		svg := shot.SVG(shot.FromFrame(frame, cols, rows), "vkwatch "+t.Format("2006-01-02 15:04:05"))
		base := filepath.Join(dir, "vkwatch-"+t.Format("20060102-150405"))
		for i := 1; i < 100; i++ {
			p := base + ".svg"
			if i > 1 {
				p = fmt.Sprintf("%s-%d.svg", base, i)
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return shotMsg{err: err}
			}
			_, err = f.Write(svg)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(p) // never leave half a picture
				return shotMsg{err: err}
			}
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			return shotMsg{path: p}
		}
		return shotMsg{err: fmt.Errorf("%s.svg and 98 more names are taken", base)}
	}
}

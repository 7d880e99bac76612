package main

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// screen is a small virtual terminal for the end-to-end tests: it applies
// what a program writes to a terminal (text, cursor moves, erases, the
// alternate screen) to a grid of cells, so that a test can read what a
// person would see at a given moment rather than search a stream of
// escape sequences. It understands what bubbletea's renderer sends and
// ignores colours and modes it has no use for.
type screen struct {
	mu         sync.Mutex
	rows, cols int
	cells      [][]string
	row, col   int
	pending    []byte // an escape sequence cut by a read boundary
	altScreen  bool
	parser     *ansi.Parser
	savedRow   int
	savedCol   int
	// title is the last window title a program set (OSC 0 or 2).
	title string
	// reply, when set, receives what the terminal answers to a query
	// (cursor position, background colour), as a terminal would type it.
	reply func(string)
}

func newScreen(rows, cols int) *screen {
	s := &screen{rows: rows, cols: cols, parser: ansi.NewParser()}
	s.clear()
	return s
}

// resize makes the screen rows x cols, blank, as a terminal whose window
// changed size before the program draws anew.
func (s *screen) resize(rows, cols int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows, s.cols, s.row, s.col = rows, cols, 0, 0
	s.clear()
}

func (s *screen) clear() {
	s.cells = make([][]string, s.rows)
	for i := range s.cells {
		s.cells[i] = blankRow(s.cols)
	}
}

func blankRow(n int) []string {
	r := make([]string, n)
	for i := range r {
		r[i] = " "
	}
	return r
}

// Write feeds the terminal. What forms whole characters and sequences is
// applied now; a sequence or character cut by a read boundary waits for
// the rest.
func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, p...)
	n := completePrefix(s.pending)
	s.apply(s.pending[:n])
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return len(p), nil
}

// completePrefix is the length of the longest prefix of b made of whole
// UTF-8 characters and whole escape sequences.
func completePrefix(b []byte) int {
	i := 0
	for i < len(b) {
		if b[i] == ansi.ESC {
			n := seqLen(b[i:])
			if n == 0 {
				break
			}
			i += n
			continue
		}
		if !utf8.FullRune(b[i:]) {
			break
		}
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return i
}

// seqLen is the length of the escape sequence at the start of b, or 0
// when it is not complete yet.
func seqLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '[': // CSI: parameters, intermediates, one final byte
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1
			}
		}
		return 0
	case ']', 'P', '_', '^', 'X': // strings ended by BEL (OSC) or ST
		for j := 2; j < len(b); j++ {
			if b[j] == ansi.BEL && b[1] == ']' {
				return j + 1
			}
			if b[j] == ansi.ESC && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2
			}
		}
		return 0
	}
	for j := 1; j < len(b); j++ { // ESC, intermediates, a final byte
		if b[j] >= 0x30 && b[j] <= 0x7e {
			return j + 1
		}
	}
	return 0
}

// flush applies whatever is pending (the program has ended).
func (s *screen) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(s.pending)
	s.pending = nil
}

func (s *screen) apply(b []byte) {
	var state byte
	for len(b) > 0 {
		seq, width, n, newState := ansi.DecodeSequence(b, state, s.parser)
		state = newState
		b = b[n:]
		switch {
		case width > 0:
			s.put(string(seq), width)
		case len(seq) == 1:
			s.control(seq[0])
		case len(seq) > 1 && seq[0] == ansi.ESC && seq[1] == '[':
			s.csi()
		case strings.HasPrefix(string(seq), "\x1b]0;"), strings.HasPrefix(string(seq), "\x1b]2;"):
			// A window title (OSC 0 or 2), kept so that a test can
			// check nothing set it.
			s.title = strings.TrimRight(string(seq[4:]), "\x07\x1b\\")
		case strings.HasPrefix(string(seq), "\x1b]11;?"):
			// The background colour query (termenv, at bubbletea's
			// init): a dark terminal answers.
			s.answer("\x1b]11;rgb:0000/0000/0000\x1b\\")
		case len(seq) == 2 && seq[0] == ansi.ESC && seq[1] == '7':
			s.savedRow, s.savedCol = s.row, s.col
		case len(seq) == 2 && seq[0] == ansi.ESC && seq[1] == '8':
			s.row, s.col = s.savedRow, s.savedCol
		}
	}
}

func (s *screen) answer(a string) {
	if s.reply != nil {
		s.reply(a)
	}
}

func (s *screen) put(g string, width int) {
	if s.col+width > s.cols {
		// bubbletea cuts lines to the width; a program that does not
		// would wrap here, which these tests never need.
		return
	}
	s.cells[s.row][s.col] = g
	for i := 1; i < width; i++ {
		s.cells[s.row][s.col+i] = ""
	}
	s.col += width
}

func (s *screen) control(c byte) {
	switch c {
	case '\r':
		s.col = 0
	case '\n':
		if s.row == s.rows-1 {
			s.cells = append(s.cells[1:], blankRow(s.cols))
		} else {
			s.row++
		}
	case '\b':
		s.col = max(s.col-1, 0)
	case '\t':
		s.col = min((s.col/8+1)*8, s.cols-1)
	}
}

func (s *screen) csi() {
	p := s.parser
	cmd := ansi.Cmd(p.Command())
	param := func(i, def int) int {
		v, _ := p.Param(i, def)
		if v == 0 && def > 0 {
			return def
		}
		return v
	}
	if cmd.Final() == 'n' && cmd.Prefix() == 0 && param(0, 0) == 6 {
		// Cursor position report: a terminal that never answers makes
		// termenv wait 5 s at start.
		s.answer(fmt.Sprintf("\x1b[%d;%dR", s.row+1, s.col+1))
		return
	}
	if cmd.Prefix() == '?' {
		if cmd.Final() == 'h' || cmd.Final() == 'l' {
			for i := range p.Params() {
				if v, _ := p.Param(i, 0); v == 1049 || v == 47 || v == 1047 {
					s.altScreen = cmd.Final() == 'h'
					s.clear()
				}
			}
		}
		return
	}
	switch cmd.Final() {
	case 'H', 'f':
		s.row = min(max(param(0, 1)-1, 0), s.rows-1)
		s.col = min(max(param(1, 1)-1, 0), s.cols-1)
	case 'A':
		s.row = max(s.row-param(0, 1), 0)
	case 'B':
		s.row = min(s.row+param(0, 1), s.rows-1)
	case 'C':
		s.col = min(s.col+param(0, 1), s.cols-1)
	case 'D':
		s.col = max(s.col-param(0, 1), 0)
	case 'G':
		s.col = min(max(param(0, 1)-1, 0), s.cols-1)
	case 'd':
		s.row = min(max(param(0, 1)-1, 0), s.rows-1)
	case 'K':
		from, to := s.col, s.cols
		switch param(0, 0) {
		case 1:
			from, to = 0, s.col+1
		case 2:
			from = 0
		}
		for i := from; i < min(to, s.cols); i++ {
			s.cells[s.row][i] = " "
		}
	case 'J':
		switch param(0, 0) {
		case 0:
			for i := s.col; i < s.cols; i++ {
				s.cells[s.row][i] = " "
			}
			for r := s.row + 1; r < s.rows; r++ {
				s.cells[r] = blankRow(s.cols)
			}
		case 1:
			for r := 0; r < s.row; r++ {
				s.cells[r] = blankRow(s.cols)
			}
			for i := 0; i <= s.col && i < s.cols; i++ {
				s.cells[s.row][i] = " "
			}
		case 2, 3:
			s.clear()
		}
	case 'X':
		for i := s.col; i < min(s.col+param(0, 1), s.cols); i++ {
			s.cells[s.row][i] = " "
		}
	}
}

// windowTitle is the last title a program set, "" when none did.
func (s *screen) windowTitle() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.title
}

// snapshot copies what the screen shows now.
func (s *screen) snapshot() shot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(shot, s.rows)
	for i, r := range s.cells {
		out[i] = append([]string(nil), r...)
	}
	return out
}

// shot is a copy of the screen's cells, row by row.
type shot [][]string

// region returns the text of columns [from, to) of every row, one line per
// row: one pane of two side by side.
func (f shot) region(from, to int) string {
	var b strings.Builder
	for _, r := range f {
		for c := from; c < to && c < len(r); c++ {
			b.WriteString(r[c])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// String returns the whole screen, one line per row.
func (f shot) String() string {
	if len(f) == 0 {
		return ""
	}
	return f.region(0, len(f[0]))
}

package standin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// serve runs one client's commands in order, as the server's main thread
// would, flushing the replies when no more commands are waiting.
func (s *Server) serve(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.st.clients--
		s.bump()
		s.mu.Unlock()
		c.Close()
	}()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	cl := &client{}
	for {
		args, err := readCommand(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				writeError(w, "ERR Protocol error: "+err.Error())
				w.Flush()
			}
			return
		}
		if len(args) == 0 {
			continue
		}
		reply := s.do(cl, args)
		reply.write(w)
		if cl.quit {
			w.Flush()
			return
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

// client is one connection's own state.
type client struct {
	db   int
	quit bool
}

// readCommand reads one command: a RESP array of bulk strings, or an
// inline command (redis-cli and telnet send those).
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > 1024 {
		return nil, fmt.Errorf("invalid multibulk length")
	}
	args := make([]string, 0, n)
	for range n {
		h, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if len(h) == 0 || h[0] != '$' {
			return nil, fmt.Errorf("expected '$', got '%.1s'", h)
		}
		size, err := strconv.Atoi(h[1:])
		if err != nil || size < 0 || size > 64<<20 {
			return nil, fmt.Errorf("invalid bulk length")
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args = append(args, string(b[:size]))
	}
	return args, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// reply is one RESP2 reply.
type reply struct {
	kind byte // '+', '-', ':', '$', '*'
	str  string
	num  int64
	arr  []string // '*': bulk strings
	null bool     // '$' nil
}

func status(s string) reply                { return reply{kind: '+', str: s} }
func errReply(s string) reply              { return reply{kind: '-', str: s} }
func integer(n int64) reply                { return reply{kind: ':', num: n} }
func bulk(s string) reply                  { return reply{kind: '$', str: s} }
func nilBulk() reply                       { return reply{kind: '$', null: true} }
func array(a ...string) reply              { return reply{kind: '*', arr: a} }
func (r reply) isError() bool              { return r.kind == '-' }
func ok() reply                            { return status("OK") }
func writeError(w *bufio.Writer, s string) { errReply(s).write(w) }

func (r reply) write(w *bufio.Writer) {
	switch r.kind {
	case '+', '-':
		w.WriteString(string(r.kind) + r.str + "\r\n")
	case ':':
		w.WriteString(":" + strconv.FormatInt(r.num, 10) + "\r\n")
	case '$':
		if r.null {
			w.WriteString("$-1\r\n")
			return
		}
		w.WriteString("$" + strconv.Itoa(len(r.str)) + "\r\n" + r.str + "\r\n")
	case '*':
		w.WriteString("*" + strconv.Itoa(len(r.arr)) + "\r\n")
		for _, a := range r.arr {
			w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
		}
	}
}

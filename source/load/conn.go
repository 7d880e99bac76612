package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// rawConn is one connection on which SETs are written as preformatted RESP
// and their replies read back without go-redis in the way.
//
// Why not go-redis for the hot path: a go-redis SET allocates a command, an
// argument slice and boxes the key and value, and the pipelined preload spends
// more CPU in the client than the server spends executing the SETs. On a
// 2-core machine that client CPU is taken from the server, so the load would
// not press the server as hard as redis-benchmark does. go-redis still dials
// and performs the handshake (TLS, AUTH or ACL user, credential providers,
// SELECT, CLIENT SETNAME), so every connection option the user gave is honoured
// exactly as the monitor's own connections honour it.
type rawConn struct {
	client *redis.Client
	rc     *redis.Conn
	nc     net.Conn
	r      *bufio.Reader
	buf    []byte // reused command buffer
}

// dialRaw opens one connection with go-redis's handshake and takes over its
// net.Conn. The go-redis connection is held out of the pool (EphemeralConn)
// until close, so go-redis never reads or writes it meanwhile.
//
// The socket is dialled here, not by go-redis's pool: a failed dial in the
// pool is retried, logged through go-redis's global logger and followed by a
// background redial goroutine that outlives Close by up to a second.
func dialRaw(ctx context.Context, opts *redis.Options) (*rawConn, error) {
	o := *opts
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.Addr == "" {
		o.Addr = "localhost:6379"
	}
	if o.Network == "" {
		o.Network = "tcp"
		if strings.HasPrefix(o.Addr, "/") {
			o.Network = "unix"
		}
	}
	dial := o.Dialer
	if dial == nil {
		dial = redis.NewDialer(&o)
	}
	nc, err := dial(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	o.Dialer = func(context.Context, string, string) (net.Conn, error) {
		var c net.Conn
		once.Do(func() { c = nc })
		if c == nil {
			return nil, errors.New("load: connection already handed over")
		}
		return c, nil
	}
	// RESP2: the server never interleaves push frames with the replies we
	// count. One connection, no retries: a failure is reported, not hidden.
	o.Protocol = 2
	o.PoolSize = 1
	o.MinIdleConns = 0
	o.MaxIdleConns = 0
	o.MaxRetries = -1
	o.DisableIdentity = true
	if o.ClientName == "" {
		o.ClientName = "vkwatch-load"
	}
	client := redis.NewClient(&o)
	rc := client.EphemeralConn()
	if err := rc.Ping(ctx).Err(); err != nil {
		rc.Close()
		client.Close()
		nc.Close()
		return nil, err
	}
	// go-redis left its own deadlines on the socket.
	nc.SetDeadline(time.Time{})
	return &rawConn{
		client: client,
		rc:     rc,
		nc:     nc,
		r:      bufio.NewReaderSize(nc, 64*1024),
		buf:    make([]byte, 0, 4096),
	}, nil
}

// interrupt makes any blocked read or write return at once. It is safe to
// call from another goroutine, unlike closing a TLS connection mid-read.
func (c *rawConn) interrupt() {
	c.nc.SetDeadline(time.Unix(1, 0))
}

func (c *rawConn) close() {
	c.rc.Close()
	c.client.Close()
	c.nc.Close() // in case go-redis kept it; a second Close is harmless
}

// appendSet appends "SET <prefix><i> <value>" in RESP to b: the preload's
// command, which creates the key.
func appendSet(b []byte, prefix string, i int, value []byte) []byte {
	return appendSetArgs(b, "*3\r\n", prefix, i, value, "")
}

// appendSetXX appends "SET <prefix><i> <value> XX" in RESP to b: the
// writers' command. XX makes the server set the key only when it exists,
// so the writers overwrite the dataset and never grow it, whatever part of
// the keyspace is missing; a missing key answers a nil reply and nothing
// is written.
func appendSetXX(b []byte, prefix string, i int, value []byte) []byte {
	return appendSetArgs(b, "*4\r\n", prefix, i, value, "$2\r\nXX\r\n")
}

func appendSetArgs(b []byte, head, prefix string, i int, value []byte, tail string) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(i), 10)
	b = append(b, head...)
	b = append(b, "$3\r\nSET\r\n$"...)
	b = strconv.AppendInt(b, int64(len(prefix)+len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, prefix...)
	b = append(b, d...)
	b = append(b, "\r\n$"...)
	b = strconv.AppendInt(b, int64(len(value)), 10)
	b = append(b, '\r', '\n')
	b = append(b, value...)
	b = append(b, '\r', '\n')
	return append(b, tail...)
}

// errNoKey is the nil reply of SET XX to a key that does not exist: the
// connection is in step and nothing was written.
var errNoKey = errors.New("load: SET XX: no such key")

// ServerError is an error reply of the server (OOM, READONLY, NOAUTH ...):
// the connection is still usable.
type ServerError string

func (e ServerError) Error() string { return string(e) }

// readReply reads the reply to one SET. A ServerError or errNoKey leaves
// the connection in sync; any other error means the connection is unusable.
func (c *rawConn) readReply() error {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("load: malformed reply %q", line)
	}
	switch line[0] {
	case '+':
		return nil
	case '-':
		return ServerError(line[1 : len(line)-2])
	case '$':
		if string(line) == "$-1\r\n" {
			return errNoKey
		}
	}
	return fmt.Errorf("load: unexpected reply to SET: %q", line)
}

package source

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestPingIORaw checks the raw-syscall path against a real server: a PING
// round trip, a read deadline that reports a timeout as net.Conn would,
// and io.EOF when the server closes the connection.
func TestPingIORaw(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	conn, err := net.DialTimeout("tcp", srv.Addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pio := newPingIO(conn)
	if pio.raw == nil {
		t.Fatal("a TCP connection does not take the raw path")
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := pio.write(pingCmd); err != nil {
		t.Fatal(err)
	}
	var buf [128]byte
	got := ""
	for len(got) == 0 || got[len(got)-1] != '\n' {
		n, err := pio.read(buf[:])
		if err != nil {
			t.Fatal(err)
		}
		got += string(buf[:n])
	}
	if got != "+PONG\r\n" {
		t.Fatalf("reply %q", got)
	}

	// Nothing more will come: the deadline ends the read.
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = pio.read(buf[:])
	var nerr net.Error
	if !errors.As(err, &nerr) || !nerr.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout net.Error", err)
	}

	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := pio.write([]byte("*1\r\n$4\r\nQUIT\r\n")); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := pio.read(buf[:])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after QUIT: %v, want io.EOF", err)
		}
	}
}

package watch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// cause turns a connection or login error into a short, one-line reason.
func (w *Watcher) cause(err error, timeout time.Duration) string {
	var (
		dnsErr  *net.DNSError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
		certErr *tls.CertificateVerificationError
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		rerr    redis.Error
		netErr  net.Error
	)
	msg := oneLine(err.Error())
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT):
		return "no such socket"
	case errors.Is(err, syscall.EACCES) || errors.Is(err, os.ErrPermission):
		return "permission denied"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "unknown host"
		}
		return "cannot resolve host: " + oneLine(dnsErr.Err)
	case errors.As(err, &recErr), errors.As(err, &alert), errors.As(err, &certErr),
		errors.As(err, &unkAuth), errors.As(err, &hostErr), errors.As(err, &invErr):
		return "TLS handshake failed: " + strings.TrimPrefix(msg, "tls: ")
	case errors.As(err, &rerr):
		text := oneLine(rerr.Error())
		switch {
		case strings.HasPrefix(text, "WRONGPASS"), strings.HasPrefix(text, "ERR invalid password"),
			strings.Contains(text, "AUTH") && strings.Contains(text, "without any password configured"):
			return "authentication failed: " + text
		case strings.HasPrefix(text, "NOAUTH"):
			return "NOAUTH password required"
		case strings.HasPrefix(text, "NOPERM"):
			return "INFO not permitted: " + text
		}
		return text
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		s := "timed out after " + timeout.String()
		if w.tlsCfg != nil {
			s += " (TLS to a plain port?)"
		}
		return s
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by server" + w.closedHint()
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by server" + w.closedHint()
	case errors.Is(err, syscall.EPIPE):
		return "connection closed by server"
	}
	switch {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "TLS handshake failed: " + msg
	case strings.Contains(msg, "remote error: tls: "):
		// The server's alert (crypto/tls wraps it in a *net.OpError of an
		// unexported type), e.g. "certificate required" without --cert.
		return "TLS handshake failed: server says " + msg[strings.Index(msg, "remote error: tls: ")+len("remote error: tls: "):]
	}
	return strings.TrimPrefix(msg, "redis: ")
}

// closedHint guesses why a server hung up at once. A TLS port resets a
// connection whose first bytes are a plain command. A TLS server that
// wants a client certificate ends the connection right after the
// handshake, and its alert is often lost to the reset that our first
// command provokes.
func (w *Watcher) closedHint() string {
	switch {
	case w.tlsCfg == nil:
		return " (plain connection to a TLS port?)"
	case len(w.tlsCfg.Certificates) == 0:
		return " (TLS client certificate required? see --cert and --key)"
	}
	return ""
}

// oneLine keeps the first line of an error text.
func oneLine(s any) string {
	var t string
	switch v := s.(type) {
	case error:
		t = v.Error()
	case string:
		t = v
	default:
		t = fmt.Sprint(v)
	}
	if i := strings.IndexAny(t, "\r\n"); i >= 0 {
		t = t[:i]
	}
	return t
}

// isTimeout reports whether err is a deadline that passed: the server is
// there but did not answer in time.
func isTimeout(err error) bool {
	var nerr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout()
}

// connectReason is what EventDisconnected says of a failed connect: the
// cause alone where there is one.
func connectReason(err error) string {
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ce.Cause
	}
	return err.Error()
}

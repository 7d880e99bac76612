package standin

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// Client is a client of the test's own on the stand-in (RESP2, no CLIENT
// SETINFO: only what the test sends), closed when the test ends.
func (s *Server) Client(t testing.TB) *Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// ClientRESP3 is a client of the test's own that asks for RESP3 and sends
// CLIENT SETINFO, as vkwatch's own clients do: the stand-in refuses
// HELLO 3 and go-redis goes on in RESP2, as it does with any server
// that does.
func (s *Server) ClientRESP3(t testing.TB) *Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// Client is go-redis's client.
type Client = redis.Client

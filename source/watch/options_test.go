package watch

import (
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

func TestRedisOptions(t *testing.T) {
	ep, err := source.ParseAddress("valkey://alice:pw@h:7004/3")
	if err != nil {
		t.Fatal(err)
	}
	o, err := RedisOptions(ep)
	if err != nil {
		t.Fatal(err)
	}
	if o.Network != "tcp" || o.Addr != "h:7004" || o.Username != "alice" || o.Password != "pw" || o.DB != 3 || o.Protocol != 2 {
		t.Errorf("options = %s %s %s db %d protocol %d", o.Network, o.Addr, o.Username, o.DB, o.Protocol)
	}
	if o.TLSConfig != nil {
		t.Error("TLS configured for a plain endpoint")
	}
	ep, _ = source.ParseAddress("rediss://db.example:7005")
	if o, err = RedisOptions(ep); err != nil || o.TLSConfig == nil || o.TLSConfig.ServerName != "db.example" {
		t.Errorf("rediss://: %v, TLS %+v", err, o)
	}
}

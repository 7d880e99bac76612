package watch

import (
	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
)

// RedisOptions returns go-redis options that reach ep: network, address,
// credentials, database and, when TLS is enabled, the TLS configuration
// of its options (source.Endpoint.TLSConfig). Timeouts and pool sizes are
// left to the caller. Every connection vkwatch makes starts here.
func RedisOptions(ep source.Endpoint) (*redis.Options, error) {
	o := &redis.Options{
		Network:  ep.Network,
		Addr:     ep.Addr,
		Username: ep.Username,
		Password: ep.Password,
		DB:       ep.DB,
		// RESP2 and no CLIENT SETINFO: the fewest commands on connect, and
		// the same behaviour on every server version.
		Protocol:        2,
		DisableIdentity: true,
	}
	if o.Network == "" {
		o.Network = "tcp"
	}
	cfg, err := ep.TLSConfig()
	if err != nil {
		return nil, err
	}
	o.TLSConfig = cfg
	return o, nil
}

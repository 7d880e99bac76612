package load

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// SampleSize is how many keys of the writers' keyspace CheckKeyspace asks
// about.
const SampleSize = 256

// Keyspace is what a sample of the writers' keyspace found on a server.
type Keyspace struct {
	Prefix  string
	Keys    int // the keyspace is Prefix0 .. Prefix(Keys-1)
	Sampled int // keys asked about
	Found   int // of those, how many exist
}

// Enough reports whether the keyspace is there to be overwritten: at least
// 9 in 10 of the sampled keys exist. A preload fills all of it; much less
// means a preload of another size, or none.
func (k Keyspace) Enough() bool { return k.Sampled > 0 && k.Found*10 >= k.Sampled*9 }

// Check is nil when the keyspace is Enough, else a *KeyspaceError naming
// server.
func (k Keyspace) Check(server string) error {
	if k.Enough() {
		return nil
	}
	return &KeyspaceError{Keyspace: k, Server: server}
}

// KeyspaceError says that the writers' keyspace is missing, or mostly
// missing, on a server: the writers only overwrite keys that exist, so
// they would either create a dataset the user never asked for or write
// nothing. Callers add how to preload in their own terms.
type KeyspaceError struct {
	Keyspace
	Server string
}

func (e *KeyspaceError) Error() string {
	what := fmt.Sprintf("only %d of %d keys sampled across it exist", e.Found, e.Sampled)
	if e.Found == 0 {
		what = fmt.Sprintf("none of %d keys sampled across it exists", e.Sampled)
	}
	return fmt.Sprintf("%s: the writers' keyspace %s0..%s%d is not there (%s; the writers only overwrite existing keys)",
		e.Server, e.Prefix, e.Prefix, e.Keys-1, what)
}

// sampleIndexes are up to SampleSize indexes spread evenly over 0..n-1,
// first and last included. A preload fills 0..m-1, so the share found
// estimates m/n.
func sampleIndexes(n int) []int {
	if n <= SampleSize {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, SampleSize)
	for j := range idx {
		idx[j] = int(int64(j) * int64(n-1) / int64(SampleSize-1))
	}
	return idx
}

// CheckKeyspace asks the server, in one EXISTS of SampleSize keys spread
// over the keyspace, how much of the writers' keyspace exists. That is
// SampleSize hash lookups and one round trip, however big the server; a
// SCAN would walk every key of a server that may hold millions of the
// user's own, and DBSIZE or INFO keyspace count keys of every prefix.
// Nothing is written.
func CheckKeyspace(ctx context.Context, opts *redis.Options, cfg Config) (Keyspace, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Keyspace{}, err
	}
	k := Keyspace{Prefix: cfg.Prefix, Keys: cfg.Keys}
	if cfg.Keys <= 0 {
		return k, nil
	}
	o := *opts
	o.PoolSize, o.MaxRetries = 1, -1
	c := redis.NewClient(&o)
	defer c.Close()
	idx := sampleIndexes(cfg.Keys)
	keys := make([]string, len(idx))
	for i, n := range idx {
		keys[i] = fmt.Sprintf("%s%d", cfg.Prefix, n)
	}
	found, err := c.Exists(ctx, keys...).Result()
	if err != nil {
		return k, fmt.Errorf("load: EXISTS on the writers' keyspace: %w", err)
	}
	k.Sampled, k.Found = len(keys), int(found)
	return k, nil
}

package load_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestCheckKeyspace: one EXISTS of a sample spread over the keyspace tells
// a full keyspace from a missing or partly loaded one, on a real server
// holding keys of another prefix too, and writes nothing.
func TestCheckKeyspace(t *testing.T) {
	s, c := servertest.StartWithClient(t)
	ctx := context.Background()
	opts := &redis.Options{Addr: s.Addr}
	// The user's own data: 150,000 key:N keys, none of the writers'.
	servertest.Populate(t, c, 150000, "key", 30)
	check := func(keys int) load.Keyspace {
		t.Helper()
		k, err := load.CheckKeyspace(ctx, opts, load.Config{Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		if k.Keys != keys || k.Prefix != load.DefaultPrefix || k.Sampled != min(keys, load.SampleSize) {
			t.Fatalf("CheckKeyspace(%d) = %+v", keys, k)
		}
		return k
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	k := check(1_000_000)
	if k.Found != 0 || k.Enough() {
		t.Errorf("no vkwatch: keys, but %+v (enough: %v)", k, k.Enough())
	}
	err := k.Check("127.0.0.1:1")
	var ke *load.KeyspaceError
	if !errors.As(err, &ke) || err.Error() != "127.0.0.1:1: the writers' keyspace vkwatch:0..vkwatch:999999 is not there "+
		"(none of 256 keys sampled across it exists; the writers only overwrite existing keys)" {
		t.Errorf("Check: %v", err)
	}
	// One EXISTS, nothing else: no SCAN, no write.
	stats := c.Info(ctx, "commandstats").Val()
	for _, line := range strings.Split(stats, "\r\n") {
		if name, rest, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(name, "cmdstat_") {
			switch strings.TrimPrefix(name, "cmdstat_") {
			case "exists":
				if !strings.HasPrefix(rest, "calls=1,") {
					t.Errorf("EXISTS: %s, want one call", rest)
				}
			case "ping", "hello", "client|setinfo", "config|resetstat", "info":
			default:
				t.Errorf("the check sent %s", line)
			}
		}
	}
	if n := c.DBSize(ctx).Val(); n != 150000 {
		t.Errorf("DBSIZE %d after the check, want 150000", n)
	}

	// 30,000 of 100,000 preloaded: about 30% found, not enough; the
	// whole 100,000: all found.
	if err := load.Preload(ctx, opts, load.Config{Keys: 30000, ValueSize: 10}, nil); err != nil {
		t.Fatal(err)
	}
	k = check(100000)
	if k.Found < 70 || k.Found > 85 || k.Enough() {
		t.Errorf("30%% of the keyspace there: %+v", k)
	}
	if err := k.Check("x"); err == nil || !strings.Contains(err.Error(), "only ") {
		t.Errorf("Check of a partial keyspace: %v", err)
	}
	if k := check(30000); k.Found != k.Sampled || !k.Enough() || k.Check("x") != nil {
		t.Errorf("the whole keyspace there: %+v", k)
	}
	// A keyspace smaller than the sample is asked about whole.
	if k := check(100); k.Sampled != 100 || k.Found != 100 {
		t.Errorf("100 keys: %+v", k)
	}
}

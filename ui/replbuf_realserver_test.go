package ui

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestRealReplicaFullSyncBuffer: a real primary with data and writers, a
// real replica attached during a slow diskless sync (rdb-key-save-delay
// makes the child stream for seconds): the primary's output buffer for
// the replica grows while the child runs, and the pane, fed by a real
// watcher, shows it beside the copy-on-write with the server's limit.
func TestRealReplicaFullSyncBuffer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	x := startRealWatch(t, ctx, server.Options{Args: []string{
		"--rdb-key-save-delay", "200", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1",
		"--client-output-buffer-limit", "replica 512mb 128mb 60",
	}})
	srv, ep := x.srv, x.ep
	m := sized(New(Config{Nodes: nodes(ep.String())}), 200, 50)
	// Writers: what the replica must replay after the snapshot, held in
	// the primary's buffer for it meanwhile.
	feed := x.run(t, ctx, &m, true)
	feed("sample with the replica limit", func(ev source.Event) bool {
		return ev.Kind == source.EventSample && ev.Sample.Config.ReplicaBufHard == source.Some[int64](512<<20)
	})
	if strings.Contains(plainView(m), "repl buf") {
		t.Fatalf("a replica buffer shown with no full sync:\n%s", plainView(m))
	}
	replica := servertest.Start(t, server.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(srv.Port)}})
	// The buffer on screen while the replica's sync runs, grown past
	// 1 MiB: the writes held for the replica, not the client's own few
	// KiB (about 5 MB/s of writes over a snapshot of 4 s).
	shown := regexp.MustCompile(`repl buf +(\d+(?:\.\d+)?) (B|KiB|MiB|GiB) of 512 MiB mem_clients_slaves(?s:.*)soft limit +128 MiB for 60s`)
	var seen string
	feed("replica output buffer on screen", func(ev source.Event) bool {
		if ev.Kind != source.EventSample || ev.Sample.Save == nil {
			return false
		}
		if got := shown.FindStringSubmatch(plainView(m)); got != nil && got[2] == "MiB" {
			seen = got[0]
			return true
		}
		return false
	})
	if !strings.Contains(plainView(m), "by replica 127.0.0.1:"+strconv.Itoa(replica.Port)) {
		t.Errorf("the save is not the replica's:\n%s", plainView(m))
	}
	t.Logf("seen: %s", seen)
	feed("end of the full sync", func(ev source.Event) bool { return ev.Kind == source.EventSaveEnded })
	if strings.Contains(plainView(m), "repl buf") {
		t.Errorf("the buffer still shown after the sync's save (%s):\n%s", seen, plainView(m))
	}
}

// writeUntil writes 1 KiB values in pipelines of 50 every 10 ms (a pace,
// not a synchronisation: about 5 MB/s, so the test leaves the machine's
// two cores to the servers) until ctx ends.
func writeUntil(ctx context.Context, c *redis.Client) {
	val := strings.Repeat("x", 1024)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ctx.Err() == nil; i++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := range 50 {
				p.Set(ctx, fmt.Sprintf("w:%d", (i*50+j)%20000), val, 0)
			}
			return nil
		})
	}
}

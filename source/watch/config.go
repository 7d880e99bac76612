package watch

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
)

// configEvery is how often CONFIG GET refreshes Sample.Config.
const configEvery = 2 * time.Second

// configNames are the settings readConfig asks for, in one round trip.
var configNames = [...]string{
	"bgsave-default-method", "forkless-infrastructure-enabled", "rdb-key-save-delay",
	"repl-diskless-sync", "save", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size",
	"client-output-buffer-limit", "disable-thp",
	"slowlog-log-slower-than", "latency-monitor-threshold", "appendfsync",
}

// readConfig asks for the save settings: one CONFIG GET of every name
// (7.0 and later), else one CONFIG GET per name, pipelined in one round
// trip (a pipeline takes a second connection of go-redis's, and nine
// commands of the server's time where one does). A server that lacks a
// setting answers nothing for it: absent. An error (NOPERM) is kept in
// Err.
func (w *Watcher) readConfig(ctx context.Context) source.SaveConfig {
	cctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	names := &configNames
	var c source.SaveConfig
	client := w.client(&w.sampler, w.cfg.ConnectTimeout)
	if client == nil {
		c.Err = redis.ErrClosed.Error()
		return c
	}
	got, err := w.configGet(cctx, client)
	if transportError(err) {
		w.drop(&w.sampler, client)
	}
	if err != nil {
		c.Err = oneLine(err)
		return c
	}
	val := func(i int) (string, bool) {
		v, ok := got[names[i]]
		return v, ok
	}
	yesNo := func(i int) source.Opt[bool] {
		v, _ := val(i)
		switch strings.ToLower(v) {
		case "yes":
			return source.Some(true)
		case "no":
			return source.Some(false)
		}
		return source.Opt[bool]{}
	}
	num := func(i int) source.Opt[int64] {
		if v, ok := val(i); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return source.Some(n)
			}
		}
		return source.Opt[int64]{}
	}
	c.Method, _ = val(0)
	c.ForklessInfra = yesNo(1)
	c.RDBKeySaveDelay = num(2)
	c.ReplDisklessSync = yesNo(3)
	if v, ok := val(4); ok {
		c.SaveSchedule = source.Some(v)
	}
	c.AutoAOFRewritePerc = num(5)
	c.AutoAOFRewriteMinSize = num(6)
	if v, ok := val(7); ok {
		c.ReplicaBufHard, c.ReplicaBufSoft, c.ReplicaBufSoftSecs = ReplicaBufferLimit(v)
	}
	c.DisableTHP = yesNo(8)
	c.SlowlogSlowerThan, c.LatencyMonitorThreshold = num(9), num(10)
	c.AppendFsync, _ = val(11)
	return c
}

// ReplicaBufferLimit reads the replica class of a
// client-output-buffer-limit value, "normal 0 0 0 slave 268435456
// 67108864 60 pubsub 33554432 8388608 60" (Valkey may say replica):
// hard and soft limits in bytes and the soft limit's seconds; all absent
// when the value has no such class or is not what it should be.
func ReplicaBufferLimit(v string) (hard, soft, secs source.Opt[int64]) {
	f := strings.Fields(v)
	for i := 0; i+3 < len(f); i += 4 {
		if c := strings.ToLower(f[i]); c != "slave" && c != "replica" {
			continue
		}
		var n [3]int64
		for j := range n {
			x, err := strconv.ParseInt(f[i+1+j], 10, 64)
			if err != nil || x < 0 {
				return
			}
			n[j] = x
		}
		return source.Some(n[0]), source.Some(n[1]), source.Some(n[2])
	}
	return
}

// configGet reads every one of configNames: in one command where the
// server takes several names, else pipelined.
func (w *Watcher) configGet(ctx context.Context, client *redis.Client) (map[string]string, error) {
	if !w.configOneByOne.Load() {
		args := make([]any, 0, 2+len(configNames))
		args = append(args, "config", "get")
		for _, n := range configNames {
			args = append(args, n)
		}
		cmd := redis.NewMapStringStringCmd(ctx, args...)
		err := client.Process(ctx, cmd)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "wrong number of arguments") {
			return cmd.Val(), err
		}
		// Before 7.0: one name a command, from now on.
		w.configOneByOne.Store(true)
	}
	var cmds [len(configNames)]*redis.MapStringStringCmd
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range configNames {
			cmds[i] = p.ConfigGet(ctx, n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	got := map[string]string{}
	for i, n := range configNames {
		if v, ok := cmds[i].Val()[n]; ok {
			got[n] = v
		}
	}
	return got, nil
}

//go:build !linux

package load

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// startEventLoop is Linux only; elsewhere every writer has a goroutine.
func (w *Writers) startEventLoop(context.Context, *redis.Options, Config, []*rawConn, []byte) bool {
	return false
}

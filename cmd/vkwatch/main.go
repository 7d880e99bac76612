// Command vkwatch shows, live, what a snapshot (BGSAVE, BGREWRITEAOF) costs
// a Valkey or Redis server: memory, copy-on-write, ops/s, PING latency, save
// progress and the cost of each save, for one or two servers side by side.
//
// This package only parses flags and wires source/ (collection) to ui/
// (drawing); neither knows about the other.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(newApp().run(context.Background(), os.Args[1:]))
}

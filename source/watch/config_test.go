package watch

import (
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// The replica class of client-output-buffer-limit as Redis 7.0 and Valkey
// write it, and values that are not what they should be.
func TestReplicaBufferLimit(t *testing.T) {
	for in, want := range map[string][3]source.Opt[int64]{
		"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60": {source.Some[int64](268435456), source.Some[int64](67108864), source.Some[int64](60)},
		"normal 0 0 0 replica 536870912 0 0 pubsub 33554432 8388608 60":       {source.Some[int64](536870912), source.Some[int64](0), source.Some[int64](0)},
		"normal 0 0 0 pubsub 33554432 8388608 60":                             {},
		"normal 0 0 0 slave 268435456 -1 60 pubsub 33554432 8388608 60":       {},
		"normal 0 0 0 slave 256mb 64mb 60":                                    {},
		"slave 1 2":                                                           {},
		"":                                                                    {},
	} {
		h, s, secs := ReplicaBufferLimit(in)
		if got := [3]source.Opt[int64]{h, s, secs}; got != want {
			t.Errorf("%q: %+v, want %+v", in, got, want)
		}
	}
	if in := source.ParseInfo("# Memory\r\nmem_clients_slaves:20512\r\n"); in.MemClientsReplicas != source.Some[int64](20512) {
		t.Errorf("mem_clients_slaves: %+v", in.MemClientsReplicas)
	}
	if in := source.ParseInfo("# Memory\r\nused_memory:1\r\n"); in.MemClientsReplicas.OK {
		t.Errorf("absent mem_clients_slaves read as %+v", in.MemClientsReplicas)
	}
}

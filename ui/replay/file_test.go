package replay

import (
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

// TestReplayNodesOfABenchRecording: a recording whose header names its
// servers by address alone (bench's, until its header carried their node
// ids) replays each server once, under the id its events carry.
func TestReplayNodesOfABenchRecording(t *testing.T) {
	rec := &record.Recording{
		Header: record.Header{Servers: []record.ServerInfo{{Addr: "127.0.0.1:7001"}, {Addr: "127.0.0.1:7002"}}},
		Events: []source.Event{{Node: "127.0.0.1:7002", Kind: source.EventSample}, {Node: "127.0.0.1:7001", Kind: source.EventSample}},
	}
	nodes := nodesOf(rec)
	if len(nodes) != 2 || nodes[0].ID != "127.0.0.1:7001" || nodes[1].ID != "127.0.0.1:7002" || nodes[1].Addr != "127.0.0.1:7002" {
		t.Errorf("nodes %+v, want 127.0.0.1:7001 and 127.0.0.1:7002, each once", nodes)
	}
}

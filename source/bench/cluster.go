package bench

import (
	"fmt"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/cluster"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/roll"
)

// ClusterTargets are the targets of bench --cluster: every node of top in
// turn, shard by shard (or, perShard, the one node a rolling save would
// save: a replica where there is one). Each node's writers write to its
// shard's primary under "vkwatch:{tag}:", a hash tag of one of the shard's
// slots, so that no write is refused with MOVED and a replica is loaded by
// replication. skipped says which nodes cannot be run on and why (failed,
// or a shard without slots or primary).
func ClusterTargets(seed source.Endpoint, top source.Topology, perShard bool) (targets []Target, skipped []string) {
	chosen := map[source.NodeID]bool{}
	for _, n := range roll.OnePerShard(top) {
		chosen[n.ID] = true
	}
	for _, sh := range top.Shards {
		var primary *source.TopologyNode
		for i := range sh.Nodes {
			if sh.Nodes[i].Role == source.RolePrimary {
				primary = &sh.Nodes[i]
				break
			}
		}
		tag := cluster.TagFor(sh.Slots)
		for _, n := range sh.Nodes {
			if perShard && !chosen[n.ID] {
				continue
			}
			switch {
			case primary == nil || tag == "":
				skipped = append(skipped, fmt.Sprintf("%s: its shard has no primary with slots to write to", n.Addr))
				continue
			case n.Health == source.HealthFailed || n.Addr == "":
				skipped = append(skipped, fmt.Sprintf("%s: the cluster marks it failed", n.Addr))
				continue
			}
			label := "primary"
			if n.ID != primary.ID {
				label = "replica of " + primary.Addr
			}
			targets = append(targets, Target{
				Save:   cluster.NodeEndpoint(seed, n),
				Write:  cluster.NodeEndpoint(seed, *primary),
				Prefix: load.DefaultPrefix + "{" + tag + "}:",
				Node:   n.ID,
				Label:  label + ", slots " + source.SlotsText(sh.Slots),
			})
		}
	}
	return targets, skipped
}

package source

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// Topology is the set of servers vkwatch watches together, as one fleet:
// the shards of a cluster (CLUSTER SHARDS or CLUSTER NODES), or the
// addresses the user gave, one shard of one node each. It travels in an
// EventTopology and is recorded like any other payload; it never holds a
// password (nodes have addresses, not endpoints).
type Topology struct {
	// Cluster says the nodes were discovered from a cluster; false for a
	// list of addresses.
	Cluster bool `json:"cluster,omitzero"`
	// Via names what told: "CLUSTER SHARDS" or "CLUSTER NODES", "nodes
	// file" for a list read from a file (empty for a list on the command
	// line), and From the address of the node that answered, or the file.
	Via  string `json:"via,omitzero"`
	From string `json:"from,omitzero"`
	// Shards are ordered by their first slot (shards without slots last);
	// a shard's primary comes first, its replicas after it by address.
	Shards []Shard `json:"shards,omitzero"`
	// PingInterval is the PING interval in force per node (see the PING
	// budget in source/fleet): what the header shows. Nodes in Attention
	// have theirs instead.
	PingInterval time.Duration `json:"ping_interval_ns,omitzero,format:nano"`
	// Attention are the nodes probed at a finer interval than the rest
	// because they save or are about to (source/fleet: attention follows
	// the save), by node id; empty when none is.
	Attention []Attended `json:"attention,omitzero"`
	// Throttled are the nodes whose watching cost them more than
	// --max-observer-cost: they are PINGed (Interval) and sampled less
	// often at rest than the rest; Reason says what it cost.
	Throttled []Attended `json:"throttled,omitzero"`
	// SampleInterval is how often INFO samples the nodes at rest, and
	// AttentionSampleInterval the nodes in Attention (the same unless the
	// fleet samples nodes at rest less often: --idle-interval).
	SampleInterval          time.Duration `json:"sample_interval_ns,omitzero,format:nano"`
	AttentionSampleInterval time.Duration `json:"attention_sample_interval_ns,omitzero,format:nano"`
	// PingBudget and SampleBudget are what the fleet's intervals are set
	// to keep within, a second and in all: PINGs (the nodes in attention
	// included), and INFO samples of the nodes at rest (the nodes in
	// attention add theirs, every AttentionSampleInterval). Zero when no
	// budget sets them (a --ping-interval holds as given).
	PingBudget   int `json:"ping_budget,omitzero"`
	SampleBudget int `json:"sample_budget,omitzero"`
	// Share is this process's share of a fleet split between several
	// (--shard I/N: the nodes whose address hashes to I of N), empty when
	// it watches every node.
	Share string `json:"share,omitzero"`
	// Changes are what changed since the fleet's previous topology; empty
	// in the first.
	Changes []TopologyChange `json:"changes,omitzero"`
	// Err says why the latest rediscovery failed (every known node asked),
	// empty when it worked. The shards are then the last ones known.
	Err string `json:"err,omitzero"`
}

// Attended is a node probed finely, and why.
type Attended struct {
	Node     NodeID        `json:"node,omitzero"`
	Addr     string        `json:"addr,omitzero"`
	Reason   string        `json:"reason,omitzero"` // "saving", "BGSAVE sent", "next in the roll", ...
	Interval time.Duration `json:"interval_ns,omitzero,format:nano"`
}

// IntervalOf is the PING interval of node: its Attention's, else
// PingInterval.
func (t *Topology) IntervalOf(node NodeID) time.Duration {
	for _, a := range t.Attention {
		if a.Node == node {
			return a.Interval
		}
	}
	return t.PingInterval
}

// Shard is a primary and its replicas.
type Shard struct {
	Slots []SlotRange    `json:"slots,omitzero"`
	Nodes []TopologyNode `json:"nodes,omitzero"`
}

// SlotRange is the hash slots Start..End, both included.
type SlotRange struct {
	Start int `json:"start,omitzero"`
	End   int `json:"end,omitzero"`
}

// SlotsText renders slot ranges as "0-5460,10923": each range as
// Start-End, or Start alone when it is one slot, joined by commas; empty
// for no ranges.
func SlotsText(rs []SlotRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.Itoa(r.Start)
		if r.End != r.Start {
			parts[i] += "-" + strconv.Itoa(r.End)
		}
	}
	return strings.Join(parts, ",")
}

// Node roles in a Topology (CLUSTER NODES says master / slave, CLUSTER
// SHARDS master / replica, INFO master / slave: all read as these).
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

// Node health in a Topology, as CLUSTER SHARDS reports it.
const (
	HealthOnline  = "online"
	HealthFailed  = "failed"  // the cluster marked it FAIL
	HealthLoading = "loading" // a replica that has no replication offset yet
)

// TopologyNode is one server of a Topology.
type TopologyNode struct {
	ID NodeID `json:"id,omitzero"`
	// Addr is the host:port to connect to (the TLS port for a TLS
	// cluster); IP is the node's address as the cluster knows it, the
	// host of Addr for a list.
	Addr     string `json:"addr,omitzero"`
	IP       string `json:"ip,omitzero"`
	Hostname string `json:"hostname,omitzero"` // CLUSTER SHARDS hostname, when the cluster announces one
	Role     string `json:"role,omitzero"`     // RolePrimary or RoleReplica; empty when unknown (a list)
	Health   string `json:"health,omitzero"`   // HealthOnline, HealthFailed or HealthLoading; empty when unknown
	Primary  NodeID `json:"primary,omitzero"`  // a replica's primary
}

// Nodes returns every node of the topology, shard by shard.
func (t *Topology) Nodes() []TopologyNode {
	var out []TopologyNode
	for _, s := range t.Shards {
		out = append(out, s.Nodes...)
	}
	return out
}

// Node returns the node with id, and whether there is one.
func (t *Topology) Node(id NodeID) (TopologyNode, bool) {
	for _, s := range t.Shards {
		for _, n := range s.Nodes {
			if n.ID == id {
				return n, true
			}
		}
	}
	return TopologyNode{}, false
}

// ChangeKind says what changed about a node between two topologies.
type ChangeKind string

const (
	NodeAdded     ChangeKind = "added"
	NodeRemoved   ChangeKind = "removed"
	RoleChanged   ChangeKind = "role"   // From and To are roles
	HealthChanged ChangeKind = "health" // From and To are health values
	// PrimaryChanged: a replica now follows another primary; From and To
	// are the primaries' node ids.
	PrimaryChanged ChangeKind = "primary"
)

// TopologyChange is one change of a node between two topologies.
type TopologyChange struct {
	Kind ChangeKind `json:"kind,omitzero"`
	Node NodeID     `json:"node,omitzero"`
	Addr string     `json:"addr,omitzero"`
	From string     `json:"from,omitzero"`
	To   string     `json:"to,omitzero"`
}

// RoleOf reads a role as INFO ("master", "slave"), CLUSTER NODES or
// CLUSTER SHARDS ("master", "replica") write it, as a Topology role; any
// other text (empty, "primary", an unknown one) is kept.
func RoleOf(role string) string {
	switch role {
	case "master":
		return RolePrimary
	case "slave", "replica":
		return RoleReplica
	}
	return role
}

// HostKey is what decides that two nodes share a host: their IP address as
// written, with every loopback address and unix socket counting as one
// host, this machine.
func HostKey(ip string) string {
	if ip == "" {
		return ""
	}
	h := strings.Trim(ip, "[]")
	if a := net.ParseIP(h); a != nil {
		if a.IsLoopback() {
			return "local"
		}
		return a.String()
	}
	if strings.EqualFold(h, "localhost") || strings.Contains(h, "/") {
		return "local"
	}
	return strings.ToLower(h)
}

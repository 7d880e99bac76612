// Package cluster finds the nodes of a Valkey or Redis Cluster from one of
// them and follows them: CLUSTER SHARDS (Redis 7.0+, Valkey), falling back
// to CLUSTER NODES on older servers, read into a source.Topology, asked
// again every few seconds and whenever a watched node's role changes, from
// any node still answering when the seed has died. Diff says what changed
// between two topologies.
//
// It only reads: CLUSTER SHARDS and CLUSTER NODES are the only commands it
// sends, on one connection to one node at a time.
package cluster

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// ParseShards reads a CLUSTER SHARDS reply as go-redis returns it for
// RESP2 (arrays of alternating names and values; a RESP3 map is read too).
// Fields it does not know (Valkey's availability-zone, shard-id, ...) are
// skipped. Roles and health are normalised (see source.RolePrimary,
// source.HealthFailed); a node's Addr uses its endpoint (else its ip) and,
// when tls is set and the node has one, its tls-port.
func ParseShards(reply any, tls bool) ([]source.Shard, error) {
	list, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("CLUSTER SHARDS: reply is %T, not an array", reply)
	}
	shards := make([]source.Shard, 0, len(list))
	for i, raw := range list {
		fields, err := pairs(raw)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER SHARDS shard %d: %w", i, err)
		}
		var sh source.Shard
		for _, f := range fields {
			switch f.name {
			case "slots":
				if sh.Slots, err = slotPairs(f.value); err != nil {
					return nil, fmt.Errorf("CLUSTER SHARDS shard %d slots: %w", i, err)
				}
			case "nodes":
				nodes, ok := f.value.([]any)
				if !ok {
					return nil, fmt.Errorf("CLUSTER SHARDS shard %d nodes: %T, not an array", i, f.value)
				}
				for j, nraw := range nodes {
					n, err := shardNode(nraw, tls)
					if err != nil {
						return nil, fmt.Errorf("CLUSTER SHARDS shard %d node %d: %w", i, j, err)
					}
					sh.Nodes = append(sh.Nodes, n)
				}
			}
		}
		var primary source.NodeID
		for _, n := range sh.Nodes {
			if n.Role == source.RolePrimary {
				primary = n.ID
				break
			}
		}
		for j := range sh.Nodes {
			if sh.Nodes[j].Role == source.RoleReplica {
				sh.Nodes[j].Primary = primary
			}
		}
		if len(sh.Nodes) > 0 {
			shards = append(shards, sh)
		}
	}
	sortShards(shards)
	return shards, nil
}

// field is one name and value of a reply read as pairs.
type field struct {
	name  string
	value any
}

// pairs reads an array of alternating names and values (RESP2) or a map
// (RESP3) as fields, in order.
func pairs(v any) ([]field, error) {
	switch x := v.(type) {
	case []any:
		if len(x)%2 != 0 {
			return nil, fmt.Errorf("%d elements, not name/value pairs", len(x))
		}
		out := make([]field, 0, len(x)/2)
		for i := 0; i < len(x); i += 2 {
			name, ok := x[i].(string)
			if !ok {
				return nil, fmt.Errorf("field name %v is %T, not a string", x[i], x[i])
			}
			out = append(out, field{name, x[i+1]})
		}
		return out, nil
	case map[any]any:
		out := make([]field, 0, len(x))
		for k, val := range x {
			name, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("field name %v is %T, not a string", k, k)
			}
			out = append(out, field{name, val})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
		return out, nil
	}
	return nil, fmt.Errorf("%T, not an array of name/value pairs", v)
}

// slotPairs reads [start, end, start, end, ...].
func slotPairs(v any) ([]source.SlotRange, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return nil, fmt.Errorf("want an even array of slot numbers, got %v", v)
	}
	out := make([]source.SlotRange, 0, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		lo, ok1 := integer(list[i])
		hi, ok2 := integer(list[i+1])
		if !ok1 || !ok2 || lo < 0 || hi < lo || hi > 16383 {
			return nil, fmt.Errorf("bad slot range %v-%v", list[i], list[i+1])
		}
		out = append(out, source.SlotRange{Start: int(lo), End: int(hi)})
	}
	return out, nil
}

// integer reads an integer reply (or a decimal string, as some proxies send).
func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

// shardNode reads one node of a CLUSTER SHARDS shard.
func shardNode(v any, tls bool) (source.TopologyNode, error) {
	fields, err := pairs(v)
	if err != nil {
		return source.TopologyNode{}, err
	}
	var (
		n                 source.TopologyNode
		endpoint          string
		port, tlsPort     int64
		havePort, haveTLS bool
	)
	for _, f := range fields {
		switch f.name {
		case "id":
			n.ID = source.NodeID(text(f.value))
		case "ip":
			n.IP = text(f.value)
		case "endpoint":
			endpoint = text(f.value)
		case "hostname":
			n.Hostname = text(f.value)
		case "port":
			port, havePort = integer(f.value)
		case "tls-port":
			tlsPort, haveTLS = integer(f.value)
		case "role":
			n.Role = source.RoleOf(text(f.value))
		case "health":
			n.Health = normHealth(text(f.value))
		}
	}
	if n.ID == "" {
		return n, errors.New("node without an id")
	}
	host := endpoint
	if host == "" || host == "?" {
		host = n.IP
	}
	if tls && haveTLS && tlsPort > 0 || !havePort || port <= 0 {
		port = tlsPort
	}
	if host != "" && port > 0 {
		n.Addr = net.JoinHostPort(host, strconv.FormatInt(port, 10))
	}
	return n, nil
}

func normHealth(h string) string {
	switch h {
	case "online":
		return source.HealthOnline
	case "fail", "failed": // Redis 7.0 says fail, the documentation failed
		return source.HealthFailed
	case "loading":
		return source.HealthLoading
	}
	return h
}

// NodeLine is one line of CLUSTER NODES.
type NodeLine struct {
	ID       source.NodeID
	IP       string
	Port     int
	Hostname string
	Flags    []string
	Master   source.NodeID // "-" in the reply: empty
	Link     string        // connected / disconnected
	Slots    []source.SlotRange
}

// ParseNodesLine reads one line of CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot> <slot> ...
//
// Slots being imported or migrated ([5461->-id], [5461-<-id]) are skipped.
func ParseNodesLine(line string) (NodeLine, error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return NodeLine{}, fmt.Errorf("CLUSTER NODES line has %d fields, want at least 8", len(f))
	}
	l := NodeLine{ID: source.NodeID(f[0]), Flags: strings.Split(f[2], ","), Link: f[7]}
	if len(f[0]) == 0 || strings.ContainsAny(f[0], ":@,") {
		return l, fmt.Errorf("CLUSTER NODES line: bad node id %q", f[0])
	}
	if f[3] != "-" {
		l.Master = source.NodeID(f[3])
	}
	addr := f[1]
	if i := strings.IndexByte(addr, ','); i >= 0 {
		addr, l.Hostname = addr[:i], addr[i+1:]
	}
	if i := strings.IndexByte(addr, '@'); i >= 0 {
		addr = addr[:i]
	}
	c := strings.LastIndexByte(addr, ':')
	if c < 0 {
		return l, fmt.Errorf("CLUSTER NODES line: address %q has no port", f[1])
	}
	l.IP = strings.Trim(addr[:c], "[]")
	port, err := strconv.Atoi(addr[c+1:])
	if err != nil || port < 0 || port > 65535 {
		return l, fmt.Errorf("CLUSTER NODES line: bad port in %q", f[1])
	}
	l.Port = port
	for _, s := range f[8:] {
		if strings.HasPrefix(s, "[") {
			continue
		}
		lo, hi, isRange := strings.Cut(s, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b > 16383 {
			return l, fmt.Errorf("CLUSTER NODES line: bad slot %q", s)
		}
		l.Slots = append(l.Slots, source.SlotRange{Start: a, End: b})
	}
	return l, nil
}

// ParseNodes reads a CLUSTER NODES reply into shards: one per primary, with
// the replicas that name it. Nodes still in a handshake or without an
// address are not members yet and are left out; a node flagged fail is
// failed (fail?, a suspicion of one node, is not).
func ParseNodes(reply string) ([]source.Shard, error) {
	byPrimary := map[source.NodeID]*source.Shard{}
	var order []source.NodeID
	shardOf := func(id source.NodeID) *source.Shard {
		sh := byPrimary[id]
		if sh == nil {
			sh = &source.Shard{}
			byPrimary[id] = sh
			order = append(order, id)
		}
		return sh
	}
	var replicas []source.TopologyNode
	for _, line := range strings.Split(reply, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		l, err := ParseNodesLine(line)
		if err != nil {
			return nil, err
		}
		if slices.Contains(l.Flags, "handshake") || slices.Contains(l.Flags, "noaddr") {
			continue
		}
		n := source.TopologyNode{ID: l.ID, IP: l.IP, Hostname: l.Hostname, Health: source.HealthOnline}
		if l.IP != "" && l.Port > 0 {
			n.Addr = net.JoinHostPort(l.IP, strconv.Itoa(l.Port))
		}
		if slices.Contains(l.Flags, "fail") {
			n.Health = source.HealthFailed
		}
		switch {
		case slices.Contains(l.Flags, "master"):
			n.Role = source.RolePrimary
			sh := shardOf(n.ID)
			sh.Slots = l.Slots
			sh.Nodes = append([]source.TopologyNode{n}, sh.Nodes...)
		case slices.Contains(l.Flags, "slave"):
			n.Role = source.RoleReplica
			n.Primary = l.Master
			replicas = append(replicas, n)
		}
	}
	for _, n := range replicas {
		sh := shardOf(n.Primary)
		sh.Nodes = append(sh.Nodes, n)
	}
	shards := make([]source.Shard, 0, len(order))
	for _, id := range order {
		shards = append(shards, *byPrimary[id])
	}
	sortShards(shards)
	return shards, nil
}

// sortShards orders shards by their first slot (shards without slots last,
// by primary id) and each shard's nodes primary first, then by address:
// two answers describing the same cluster compare equal.
func sortShards(shards []source.Shard) {
	for i := range shards {
		sh := &shards[i]
		sort.Slice(sh.Slots, func(a, b int) bool { return sh.Slots[a].Start < sh.Slots[b].Start })
		sort.SliceStable(sh.Nodes, func(a, b int) bool {
			x, y := sh.Nodes[a], sh.Nodes[b]
			if (x.Role == source.RolePrimary) != (y.Role == source.RolePrimary) {
				return x.Role == source.RolePrimary
			}
			if x.Addr != y.Addr {
				return x.Addr < y.Addr
			}
			return x.ID < y.ID
		})
	}
	key := func(s source.Shard) (int, source.NodeID) {
		first := 1 << 20
		if len(s.Slots) > 0 {
			first = s.Slots[0].Start
		}
		var id source.NodeID
		if len(s.Nodes) > 0 {
			id = s.Nodes[0].ID
		}
		return first, id
	}
	sort.SliceStable(shards, func(i, j int) bool {
		a, ai := key(shards[i])
		b, bi := key(shards[j])
		if a != b {
			return a < b
		}
		return ai < bi
	})
}

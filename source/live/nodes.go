package live

import (
	"context"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/nodefile"
)

// FollowNodes is a fleet's Follow for a nodes file (--nodes) read at
// start into from: the file looked at every poll and re-read when it
// changes, each good list the fleet's members, a bad one said and the
// members kept.
func FollowNodes(path string, poll time.Duration, parse nodefile.Parse, from nodefile.List) func(context.Context, func([]fleet.Member, error)) {
	return func(ctx context.Context, update func([]fleet.Member, error)) {
		nodefile.Follow(ctx, path, poll, parse, from,
			func(eps []source.Endpoint) { update(MembersOf(eps), nil) },
			func(err error) { update(nil, err) })
	}
}

// MembersOf are fleet members of endpoints, each its own node.
func MembersOf(eps []source.Endpoint) []fleet.Member {
	ms := make([]fleet.Member, len(eps))
	for i, ep := range eps {
		ms[i] = fleet.Member{ID: ep.Node(), Endpoint: ep}
	}
	return ms
}

package watch

// connState is where the sampler stands with its server. It lives in
// sampling.state and changes only through sampling.move, by connState.next.
type connState uint8

const (
	// connecting: Run has not reached the server yet and has said nothing.
	connecting connState = iota
	// up: connected, and INFO answers.
	up
	// stalled: connected, but INFO timed out: the server is there and
	// silent (DEBUG SLEEP, a huge command, SIGSTOP). The connection and
	// what was sampled are kept.
	stalled
	// down: not connected, and EventDisconnected has said so.
	down
)

// connected reports whether the sampler has a connection to sample on
// (up or stalled); otherwise it dials.
func (c connState) connected() bool { return c == up || c == stalled }

// connEvent is what the sampler's last call to the server came to.
type connEvent uint8

const (
	dialled    connEvent = iota // connect dialled, logged in and read INFO
	dialFailed                  // connect failed
	answered                    // a sample's INFO answered
	timedOut                    // a sample's INFO timed out
	failed                      // a sample's INFO failed otherwise: the connection is gone
)

// next is the one table of the connection's moves: the state after e, and
// whether the move is news for the user, said as an event:
//
//	connecting, down --dialled-->    up       EventConnected
//	connecting       --dialFailed--> down     EventDisconnected
//	down             --dialFailed--> down     nothing: an outage is said once
//	up, stalled      --timedOut-->   stalled  EventDisconnected, Stalled, each time (how long silent)
//	up, stalled      --failed-->     down     EventDisconnected
//	stalled          --answered-->   up       EventConnected (the stall is over)
//	up               --answered-->   up       nothing
func (c connState) next(e connEvent) (connState, bool) {
	switch e {
	case dialled:
		return up, true
	case dialFailed:
		return down, c != down
	case answered:
		return up, c == stalled
	case timedOut:
		return stalled, true
	case failed:
		return down, true
	}
	return c, false
}

// move takes the connection through e and reports whether that is news.
func (s *sampling) move(e connEvent) (news bool) {
	s.state, news = s.state.next(e)
	return news
}

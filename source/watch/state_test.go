package watch

import "testing"

// TestConnStateMoves walks the connection through the outages a user
// meets and checks what each move says: an outage once however many
// reconnects fail, a stall every time INFO times out (each says how long),
// its end once, and a dead connection after a stall.
func TestConnStateMoves(t *testing.T) {
	steps := []struct {
		e    connEvent
		want connState
		news bool
	}{
		{dialFailed, down, true},  // the first attempt fails: said
		{dialFailed, down, false}, // the same outage: not said again
		{dialled, up, true},
		{answered, up, false},
		{timedOut, stalled, true},
		{timedOut, stalled, true}, // still silent: said again, with the time
		{answered, up, true},      // the stall is over
		{timedOut, stalled, true},
		{failed, down, true}, // the stalled connection dies
		{dialFailed, down, false},
		{dialled, up, true},
		{failed, down, true},
		{dialFailed, down, false},
	}
	s := &sampling{}
	if s.state != connecting || s.state.connected() {
		t.Fatalf("a new sampling is in state %d, connected %v: want connecting, not connected", s.state, s.state.connected())
	}
	for i, st := range steps {
		from := s.state
		news := s.move(st.e)
		if s.state != st.want || news != st.news {
			t.Fatalf("step %d: %d --%d--> %d, news %v; want %d, news %v", i, from, st.e, s.state, news, st.want, st.news)
		}
		if got, want := s.state.connected(), st.want == up || st.want == stalled; got != want {
			t.Fatalf("step %d: connected() = %v in state %d", i, got, s.state)
		}
	}
	if st, news := connecting.next(dialled); st != up || !news {
		t.Fatalf("connecting --dialled--> %d, news %v; want up, news", st, news)
	}
}

package retime

import (
	"testing"
	"time"
)

// TestSet: a change wakes the loop once, however many came before it
// looked; the same interval again, or none, neither changes nor wakes.
func TestSet(t *testing.T) {
	i := New(time.Second)
	if i.Set(time.Second) || i.Set(0) || i.Set(-time.Second) {
		t.Fatal("Set reported a change for the interval in force, or for none")
	}
	select {
	case <-i.Changed():
		t.Fatal("woken without a change")
	default:
	}
	if !i.Set(50*time.Millisecond) || !i.Set(2*time.Second) {
		t.Fatal("Set did not report a change")
	}
	if got := i.Get(); got != 2*time.Second {
		t.Fatalf("Get %s after Set(2s)", got)
	}
	<-i.Changed()
	select {
	case <-i.Changed():
		t.Fatal("two changes unseen woke the loop twice")
	default:
	}
}

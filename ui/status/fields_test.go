package status

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/ui/style"
)

// TestBlockKeepsTheMostImportant: short of room, a block leaves out its
// least important fields first, whatever order it lists them in, and a
// field says less (its Short) before it goes.
func TestBlockKeepsTheMostImportant(t *testing.T) {
	st := &style.Styles{}
	b := Block{Title: "save", Short: "save", Fields: []Field{
		fieldOf(PrioMore, "extra", "something"),
		fieldOf(PrioKeys, "keys", "1,000/2,000"),
		fieldOf(PrioProgress, "progress", "50.0%"),
	}}
	// One row, room for the title and two fields.
	lines, left := b.Lines(st, len("save   progress 50.0%   keys 1,000/2,000")+2, 1)
	row := strings.Join(lines, "\n")
	if left != 1 || !strings.Contains(row, "progress 50.0%") || !strings.Contains(row, "keys 1,000/2,000") || strings.Contains(row, "extra") {
		t.Errorf("one row: %q, %d left out; want progress and keys, not extra", row, left)
	}
	// Every field fits two rows under the title.
	if lines, left = b.Lines(st, 80, 3); left != 0 || !strings.Contains(strings.Join(lines, "\n"), "extra") {
		t.Errorf("three rows: %q, %d left out; want every field", lines, left)
	}

	// A field with a short value says less before the block leaves it out.
	b.Fields[1] = fieldOf(PrioKeys, "keys", "1,000 of 2,000 keys processed").or("1,000/2,000")
	lines, left = b.Lines(st, len("save   progress 50.0%   keys 1,000/2,000")+2, 1)
	if row := strings.Join(lines, "\n"); left != 1 || !strings.Contains(row, "keys 1,000/2,000") {
		t.Errorf("one row, keys' short value: %q, %d left out", row, left)
	}
}

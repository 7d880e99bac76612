package inert

import (
	"reflect"
	"testing"
)

type key string

type inner struct {
	Name string
	N    int
}

type outer struct {
	ID    key
	Text  string
	Ptr   *inner
	Arr   [2]inner
	Slice []inner
	Map   map[string]string
	Any   any
	Nums  []int
	priv  string
}

func TestWalkCopiesOnWrite(t *testing.T) {
	w := NewWalker(reflect.TypeFor[key]())
	orig := outer{
		ID: "id\x1b", Text: "t\x1b", Ptr: &inner{Name: "p\x1b"},
		Arr: [2]inner{{Name: "ok"}, {Name: "a\x1b"}}, Slice: []inner{{Name: "s\x1b"}},
		Map: map[string]string{"k\x1b": "v\x1b"}, Any: "i\x1b", priv: "x\x1b",
	}
	got := Walk(w, orig)
	if got.ID != "id\x1b" {
		t.Errorf("key type changed: %q", got.ID)
	}
	want := []string{got.Text, got.Ptr.Name, got.Arr[1].Name, got.Slice[0].Name, got.Map[`k\x1b`], got.Any.(string)}
	for _, s := range want {
		if !Clean(s) {
			t.Errorf("left %q", s)
		}
	}
	if orig.Text != "t\x1b" || orig.Ptr.Name != "p\x1b" || orig.Slice[0].Name != "s\x1b" || orig.Map["k\x1b"] != "v\x1b" {
		t.Errorf("original changed: %+v %+v", orig, *orig.Ptr)
	}
}

func TestWalkCleanKeepsPointers(t *testing.T) {
	w := NewWalker()
	orig := outer{Text: "fine", Ptr: &inner{Name: "ok"}, Slice: []inner{{Name: "ok"}}}
	got := Walk(w, orig)
	if got.Ptr != orig.Ptr || &got.Slice[0] != &orig.Slice[0] {
		t.Errorf("a clean value was copied")
	}
}

package inert

import (
	"reflect"
	"sync"
)

// Walker makes every string inside a value inert (Text), through structs,
// pointers, arrays, slices, maps and interfaces, so that a new field of an
// event is covered the day it is added. It copies on write: a value with
// nothing to escape comes back as it is, sharing its pointers, and a
// value that needed escaping comes back as a copy, the original untouched
// (a recorder may be writing the same event). Types given to NewWalker as
// keys are left alone: an identifier the program looks things up by must
// stay what the server said; show it through Text instead.
type Walker struct {
	keys  map[reflect.Type]bool
	plans sync.Map // reflect.Type -> *plan
}

// plan is what Walker visits in a type: for a struct, the fields that can
// hold a string; for a container, whether its elements can.
// The plans of a type's parts are linked in, so a walk looks nothing up.
type plan struct {
	strings bool // the type can hold a string Walker escapes
	fields  []fieldPlan
	elem    *plan // pointer, array, slice, map: the element's plan
	key     *plan // map: the key's plan
}

// fieldPlan is a struct field that can hold a string (exported only).
type fieldPlan struct {
	index int
	plan  *plan
}

// NewWalker returns a Walker that leaves values of the key types alone.
func NewWalker(keys ...reflect.Type) *Walker {
	w := &Walker{keys: map[reflect.Type]bool{}}
	for _, k := range keys {
		w.keys[k] = true
	}
	return w
}

// Walk returns v with every string made inert.
func Walk[T any](w *Walker, v T) T {
	rv := reflect.ValueOf(&v).Elem()
	p := w.planOf(rv.Type())
	if !p.strings {
		return v
	}
	if nv, changed := w.walk(rv, p); changed {
		return nv.Interface().(T)
	}
	return v
}

// planOf returns (and caches) the plan of t.
func (w *Walker) planOf(t reflect.Type) *plan {
	if p, ok := w.plans.Load(t); ok {
		return p.(*plan)
	}
	p := w.build(t, map[reflect.Type]*plan{})
	w.plans.Store(t, p)
	return p
}

// build computes t's plan; seen breaks cycles (a recursive type is
// assumed to hold strings while it is being built).
func (w *Walker) build(t reflect.Type, seen map[reflect.Type]*plan) *plan {
	if p, ok := seen[t]; ok {
		return p
	}
	p := &plan{}
	seen[t] = p
	if w.keys[t] {
		return p
	}
	p.strings = true // until shown otherwise, for cycles
	switch t.Kind() {
	case reflect.String:
	case reflect.Pointer, reflect.Array, reflect.Slice:
		p.elem = w.build(t.Elem(), seen)
		p.strings = p.elem.strings
	case reflect.Map:
		p.key, p.elem = w.build(t.Key(), seen), w.build(t.Elem(), seen)
		p.strings = p.key.strings || p.elem.strings
	case reflect.Interface:
	case reflect.Struct:
		p.strings = false
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if fp := w.build(f.Type, seen); f.IsExported() && fp.strings {
				p.fields = append(p.fields, fieldPlan{i, fp})
				p.strings = true
			}
		}
	default:
		p.strings = false
	}
	return p
}

// walk returns v made inert, and whether that changed it (else the value
// returned is v itself).
func (w *Walker) walk(v reflect.Value, p *plan) (reflect.Value, bool) {
	if !p.strings {
		return v, false
	}
	t := v.Type()
	switch t.Kind() {
	case reflect.String:
		s := v.String()
		c := Text(s)
		if c == s {
			return v, false
		}
		nv := reflect.New(t).Elem()
		nv.SetString(c)
		return nv, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := w.walk(v.Elem(), p.elem)
		if !changed {
			return v, false
		}
		np := reflect.New(t.Elem())
		np.Elem().Set(e)
		return np, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		// An interface's dynamic type is only known now.
		e, changed := w.walk(v.Elem(), w.planOf(v.Elem().Type()))
		if !changed {
			return v, false
		}
		ni := reflect.New(t).Elem()
		ni.Set(e)
		return ni, true
	case reflect.Struct:
		return w.walkStruct(v, p)
	case reflect.Array, reflect.Slice:
		return w.walkList(v, p)
	case reflect.Map:
		return w.walkMap(v, p)
	}
	return v, false
}

// walkStruct walks v's exported fields that can hold strings; the struct
// is copied only once a field changes.
func (w *Walker) walkStruct(v reflect.Value, p *plan) (reflect.Value, bool) {
	var out reflect.Value
	for _, fp := range p.fields {
		f, changed := w.walk(v.Field(fp.index), fp.plan)
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(v.Type()).Elem()
			out.Set(v)
		}
		out.Field(fp.index).Set(f)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// walkList walks an array's or a slice's elements; it is copied only once
// an element changes, so the caller's slice is never written.
func (w *Walker) walkList(v reflect.Value, p *plan) (reflect.Value, bool) {
	t := v.Type()
	var out reflect.Value
	for i := 0; i < v.Len(); i++ {
		e, changed := w.walk(v.Index(i), p.elem)
		if !changed {
			continue
		}
		if !out.IsValid() {
			if t.Kind() == reflect.Array {
				out = reflect.New(t).Elem()
				out.Set(v)
			} else {
				out = reflect.MakeSlice(t, v.Len(), v.Len())
				reflect.Copy(out, v)
			}
		}
		out.Index(i).Set(e)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// walkMap walks a map's keys and values into a new map, returned only if
// one of them changed.
func (w *Walker) walkMap(v reflect.Value, p *plan) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	changed := false
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	it := v.MapRange()
	for it.Next() {
		k, kc := w.walk(it.Key(), p.key)
		e, ec := w.walk(it.Value(), p.elem)
		changed = changed || kc || ec
		out.SetMapIndex(k, e)
	}
	if changed {
		return out, true
	}
	return v, false
}

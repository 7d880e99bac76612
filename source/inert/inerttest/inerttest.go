// Package inerttest checks, for tests, that a type's Inert method reaches
// every string the type can carry: Fill sets them all by reflection, so a
// field added tomorrow is filled without the test naming it, and Raw
// lists those still unsafe to show. Reflection is for tests only: the
// Inert methods themselves are plain code.
package inerttest

import (
	"reflect"
	"testing"

	"github.com/vkwatch/vkwatch/source/inert"
)

// Hostile is text no terminal should be sent raw: a title change, a
// colour, and a C1 CSI clearing the screen.
const Hostile = "\x1b]0;PWNED\x07\x1b[31m\u009b2J"

// Fill sets every string reachable from ptr to Hostile, allocating every
// pointer and giving every slice and map one element.
func Fill(ptr any) { fill(reflect.ValueOf(ptr).Elem()) }

func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(Hostile)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i))
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// Strings calls f on every string reachable from v, with its path (as
// "ev.Report.Addr"), except those of the types in keep.
func Strings(v any, path string, f func(path, s string), keep ...reflect.Type) {
	strs(reflect.ValueOf(v), path, f, keep)
}

func strs(v reflect.Value, path string, f func(path, s string), keep []reflect.Type) {
	switch v.Kind() {
	case reflect.String:
		for _, k := range keep {
			if v.Type() == k {
				return
			}
		}
		f(path, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			strs(v.Elem(), path, f, keep)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				strs(v.Field(i), path+"."+v.Type().Field(i).Name, f, keep)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			strs(v.Index(i), path+"[]", f, keep)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			strs(it.Key(), path+"{key}", f, keep)
			strs(it.Value(), path+"{}", f, keep)
		}
	}
}

// Raw returns the paths of the strings reachable from v (but those of the
// types in keep) that inert.Text would change, and how many it looked at.
func Raw(v any, path string, keep ...reflect.Type) (raw []string, seen int) {
	Strings(v, path, func(p, s string) {
		seen++
		if !inert.Clean(s) {
			raw = append(raw, p)
		}
	}, keep...)
	return raw, seen
}

// Check fails t for every string of got (but those of the types in keep)
// that inert.Text would change, when it looked at fewer than min strings,
// and for every string of orig (filled by Fill) that is no longer
// Hostile: what an Inert method is given must keep its exact text.
func Check(t testing.TB, orig, got any, path string, min int, keep ...reflect.Type) {
	t.Helper()
	raw, seen := Raw(got, path, keep...)
	for _, p := range raw {
		t.Errorf("%s left raw", p)
	}
	if seen < min {
		t.Fatalf("only %d strings checked", seen)
	}
	Strings(orig, path, func(p, s string) {
		if s != Hostile {
			t.Errorf("original %s changed to %q", p, s)
		}
	})
}

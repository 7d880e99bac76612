package record

import (
	"reflect"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// Delta samples (format version 3). A sample line is about 1.8 KB of JSON,
// most of it the same as the node's previous line: the INFO fields of an
// idle server hardly move. So the Writer writes a node's sample as a
// "delta": only the fields that differ from that node's previous sample,
// at any depth ({"info":{"used_memory":1049600,"total_commands":93}}), with
// "seq" left out when it is the previous one's plus one and "at" left out
// of the line (it is always epoch + t). A full "sample" is written at
// least every fullEvery per node, and whenever a delta could not be read
// on its own terms: the node's first sample, a new watcher run (seq not
// the next), a save_started event. A reader that starts in the middle (a
// seek) skips a node's deltas until its next full sample.
//
// A field that became absent is written as null, as in a full sample.
//
// Format version 5: a delta leaves out the instruments' figures (cow,
// cow_from, footprint, footprint_from) when they are what
// source.FillInstruments derives from the sample's INFO and /proc
// figures, which they nearly always are, and writes them whenever they are
// not: in a version 5 delta an absent instrument key means "derived", not
// "unchanged". Before, footprint alone was about 5 of a busy sample's 128
// compressed bytes, a copy of proc.rss plus the child's private dirty.

// derivedKeys are the keys a version 5 delta writes only when they differ
// from what FillInstruments derives.
var derivedKeys = []string{"cow", "cow_from", "footprint", "footprint_from"}

// derivedFields are the fields of derivedKeys, in that order.
func derivedFields(s *source.Sample) []any {
	return []any{&s.COW, &s.COWFrom, &s.Footprint, &s.FootprintFrom}
}

// fullEvery is how often a node's sample is written whole.
var fullEvery = 5 * time.Second

// deltaState is what the Writer remembers per node.
type deltaState struct {
	prev     source.Sample
	lastFull time.Duration
}

// useDelta says whether ev's sample may be written as a delta against st.
func useDelta(st *deltaState, ev source.Event) bool {
	return st != nil && ev.Kind == source.EventSample && ev.Sample != nil &&
		ev.Sample.Seq == st.prev.Seq+1 && ev.Offset-st.lastFull < fullEvery && ev.Offset >= st.lastFull
}

// encodeDelta writes a sample event as a delta against prev (no newline).
func encodeDelta(ev source.Event, prev *source.Sample, epoch time.Time) []byte {
	var e encoder
	e.open()
	e.key("t")
	e.buf.WriteString(formatDecimal(int64(ev.Offset), 9))
	e.key("node")
	e.str(string(ev.Node))
	e.key("kind")
	e.str(ev.Kind.String())
	e.key("delta")
	e.open()
	s := *ev.Sample
	skip := map[string]bool{"seq": true}
	if s.Offset == ev.Offset && s.At.Equal(epoch.Add(ev.Offset)) {
		skip["offset_s"], skip["at"] = true, true
	}
	for _, k := range derivedKeys {
		skip[k] = true
	}
	e.diffFields(reflect.ValueOf(*prev), reflect.ValueOf(s), skip)
	d := s
	source.FillInstruments(&d)
	have, derived := derivedFields(&s), derivedFields(&d)
	for i, k := range derivedKeys {
		if v := reflect.ValueOf(have[i]).Elem(); !sameValue(v, reflect.ValueOf(derived[i]).Elem()) {
			e.key(k)
			e.value(v, 0)
		}
	}
	e.close()
	e.close()
	return e.buf.Bytes()
}

// diffFields writes the fields of struct cur that differ from prev, as
// members of the open object: a struct that differs in part as an object
// of its differing fields, anything else whole.
func (e *encoder) diffFields(prev, cur reflect.Value, skip map[string]bool) {
	for _, f := range fieldsOf(cur.Type()) {
		if skip[f.key] {
			continue
		}
		pv, cv := prev.Field(f.index), cur.Field(f.index)
		if sameValue(pv, cv) {
			continue
		}
		e.fieldKey(f)
		t := cv.Type()
		switch {
		case t.Kind() == reflect.Struct && !isOpt(t) && t != timeType:
			e.open()
			e.diffFields(pv, cv, nil)
			e.close()
		case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !pv.IsNil() && !cv.IsNil():
			e.open()
			e.diffFields(pv.Elem(), cv.Elem(), nil)
			e.close()
		default:
			e.value(cv, f.scale)
		}
	}
}

// sameValue is reflect.DeepEqual for the values a sample holds, without
// boxing each field into an interface (the writer asks it of every field
// of every sample): numbers, strings and booleans compared directly,
// structs field by field, anything else by DeepEqual.
func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() // NaN differs from itself, as in DeepEqual
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Struct:
		if a.Type() == timeType {
			break
		}
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Pointer() == b.Pointer() || sameValue(a.Elem(), b.Elem())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// fillDerived sets the instruments' fields a version 5 delta line left
// out (has says which keys it has) to what FillInstruments derives.
func fillDerived(s *source.Sample, has func(key string) bool) {
	d := *s
	source.FillInstruments(&d)
	have, derived := derivedFields(s), derivedFields(&d)
	for i, k := range derivedKeys {
		if !has(k) {
			reflect.ValueOf(have[i]).Elem().Set(reflect.ValueOf(derived[i]).Elem())
		}
	}
}

package record

import (
	"reflect"
	"time"
	"unsafe"

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
// source.Derive derives from the sample's INFO and /proc
// figures, which they nearly always are, and writes them whenever they are
// not: in a version 5 delta an absent instrument key means "derived", not
// "unchanged". Before, footprint alone was about 5 of a busy sample's 128
// compressed bytes, a copy of proc.rss plus the child's private dirty.

// Format version 6 goes on to two figures of a sample that are copies or
// sums of others: ping10s.in_flight_us (the PING in flight when the
// summary was taken, the same one for both windows: ping.in_flight_us)
// and save.elapsed_s (the sample's offset less save.started_s: the
// tracker's definition). A version 6 delta leaves each out when it is
// that, and writes it when it is not; absent means derived here too.

// Format version 7 adds save.eta_s: a delta leaves it out when it is the
// server's forkless estimate (forkless_eta, in whole seconds: the tracker
// takes that when there is one), or else the previous sample's ETA
// counted down by the time between the two, as the tracker's own ETA runs
// between two steps of the keys processed. The writer records the
// counted-down figure whenever it rounds to the live one's millisecond
// (the precision rule's, precision.go), so the chain of deltas carries
// the ETA as exactly as the rounding did.

// derivedKeys are the keys a version 5 delta writes only when they differ
// from what Derive derives.
var derivedKeys = []string{"cow", "cow_from", "footprint", "footprint_from"}

// derivedFields are the fields of derivedKeys, in that order.
func derivedFields(s *source.Sample) []any {
	return []any{&s.COW, &s.COWFrom, &s.Footprint, &s.FootprintFrom}
}

// fullEvery is how often a node's sample is written whole.
var fullEvery = 5 * time.Second

// deltaState is what the Writer remembers per node: two copies of a
// sample, taken in turn, one the node's previous sample event (prev), the
// other the sample being written (next).
type deltaState struct {
	prev, next *sampleCopy
	copies     [2]sampleCopy
	begun      bool // prev holds a sample event
	lastFull   time.Duration
}

// useDelta says whether ev's sample may be written as a delta against st.
func useDelta(st *deltaState, ev source.Event) bool {
	return st != nil && st.begun && ev.Kind == source.EventSample && ev.Sample != nil &&
		ev.Sample.Seq == st.prev.s.Seq+1 && ev.Offset-st.lastFull < fullEvery && ev.Offset >= st.lastFull
}

// encodeDelta writes a sample event as a delta against prev (no newline).
func encodeDelta(ev source.Event, prev *source.Sample, epoch time.Time) []byte {
	var e encoder
	e.delta(ev, prev, epoch)
	return e.buf.Bytes()
}

// Skip sets of a delta's top level: seq (the previous one's plus one) and
// the derived instruments always; offset_s and at when they are the
// event's, as they nearly always are. Fixed, so a delta allocates none.
var (
	deltaSkip   = fieldSetOf(sampleType, append([]string{"seq"}, derivedKeys...)...)
	deltaSkipAt = fieldSetOf(sampleType, append([]string{"seq", "offset_s", "at"}, derivedKeys...)...)
)

// delta writes a sample event as a delta against prev.
func (e *encoder) delta(ev source.Event, prev *source.Sample, epoch time.Time) {
	e.open()
	e.key("t")
	e.decimal(int64(ev.Offset), 9)
	e.key("node")
	e.str(string(ev.Node))
	e.key("kind")
	e.str(ev.Kind.String())
	e.key("delta")
	e.open()
	s := ev.Sample
	skip := deltaSkip
	if s.Offset == ev.Offset && s.At.Equal(epoch.Add(ev.Offset)) {
		skip = deltaSkipAt
	}
	e.diffFields(fieldsOf(sampleType), unsafe.Pointer(prev), unsafe.Pointer(s), skip)
	// The instruments, where they are not what Derive makes of
	// the line's figures.
	d := derivedOf(s)
	e.underived("cow", s.COW, d.COW, s.COWFrom, d.COWFrom)
	e.underived("footprint", s.Footprint, d.Footprint, s.FootprintFrom, d.FootprintFrom)
	e.close()
	e.close()
}

// underived writes an instrument's figure (key) and where it is from
// (key_from), each where it is not what was derived.
func (e *encoder) underived(key string, v, derived source.Opt[int64], from, derivedFrom source.Instrument) {
	if v != derived {
		e.key(key)
		e.optInt(v)
	}
	if from != derivedFrom {
		e.key(key + "_from")
		e.str(string(from))
	}
}

// derived are the instruments' figures Derive makes of a
// sample's INFO and /proc figures.
type derived struct {
	COW, Footprint         source.Opt[int64]
	COWFrom, FootprintFrom source.Instrument
}

// derivedOf derives them on s itself, which it leaves as it was: no copy
// of a sample.
func derivedOf(s *source.Sample) derived {
	was := derived{s.COW, s.Footprint, s.COWFrom, s.FootprintFrom}
	source.Derive(s)
	d := derived{s.COW, s.Footprint, s.COWFrom, s.FootprintFrom}
	s.COW, s.Footprint, s.COWFrom, s.FootprintFrom = was.COW, was.Footprint, was.COWFrom, was.FootprintFrom
	return d
}

// diffFields writes the fields of the struct at cp that differ from the
// one at pp, both of the type whose fields are fields, as members of the
// open object: a struct that differs in part as an object of its
// differing fields, anything else whole. It says whether it wrote any.
// In place: the writer compares every field of every sample with its
// previous one, at --interval 10ms two hundred samples a second.
func (e *encoder) diffFields(fields []fieldInfo, pp, cp unsafe.Pointer, skip fieldSet) bool {
	wrote := false
	for i := range fields {
		f := &fields[i]
		if skip.has(i) {
			continue
		}
		pf, cf := unsafe.Add(pp, f.offset), unsafe.Add(cp, f.offset)
		switch {
		case f.eq != nil:
			if f.eq(pf, cf) {
				continue
			}
			e.fieldKey(f)
			if f.put != nil {
				f.put(e, cf, f.scale) // an Opt or a scalar: whole
			} else {
				e.value(reflect.NewAt(f.typ, cf).Elem(), f.scale)
			}
		case f.sub != nil:
			if f.same != nil && f.same(pf, cf) || !e.diffObject(f, f.sub, pf, cf) {
				continue
			}
		case f.typ.Kind() == reflect.Pointer && f.typ.Elem().Kind() == reflect.Struct &&
			*(*unsafe.Pointer)(pf) != nil && *(*unsafe.Pointer)(cf) != nil:
			// Both there (a save's progress): its differing fields.
			if !e.diffObject(f, fieldsOf(f.typ.Elem()), *(*unsafe.Pointer)(pf), *(*unsafe.Pointer)(cf)) {
				continue
			}
		default:
			pv, cv := reflect.NewAt(f.typ, pf).Elem(), reflect.NewAt(f.typ, cf).Elem()
			if sameValue(pv, cv) {
				continue
			}
			e.fieldKey(f)
			e.value(cv, f.scale)
		}
		wrote = true
	}
	return wrote
}

// diffObject writes field f as an object of the fields of the struct at cp
// that differ from the one at pp, and nothing when none does: it says
// whether it wrote it.
func (e *encoder) diffObject(f *fieldInfo, fields []fieldInfo, pp, cp unsafe.Pointer) bool {
	n, first := e.buf.Len(), e.first[len(e.first)-1]
	e.fieldKey(f)
	e.open()
	if !e.diffFields(fields, pp, cp, fieldSet{}) {
		// Nothing differs: as if it had never begun.
		e.first = e.first[:len(e.first)-1]
		e.first[len(e.first)-1] = first
		e.buf.Truncate(n)
		return false
	}
	e.close()
	return true
}

// sameFor is a comparison in place of two structs of type t, for those of
// a sample that stay the same for many samples (the save settings, the
// /proc figures on an idle host): one typed == instead of a comparison of
// each field. nil for the others.
func sameFor(t reflect.Type) func(a, b unsafe.Pointer) bool {
	switch t {
	case reflect.TypeOf(source.SaveConfig{}):
		return eqOf[source.SaveConfig]
	case reflect.TypeOf(source.ProcMem{}):
		return eqOf[source.ProcMem]
	}
	return nil
}

func eqOf[T comparable](a, b unsafe.Pointer) bool { return *(*T)(a) == *(*T)(b) }

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
			break // rare in a delta: Sample.At is left out
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
	case reflect.Array:
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// deltaBase makes prev what the delta of cur is taken against, and returns
// it: the figures version 6 derives set to cur's where cur's are
// derivable (so the delta leaves them out) and to something other than
// cur's where not (so the delta writes them even when they did not
// change). In place: prev (and its save progress) is the writer's copy of
// the node's previous sample, which cur replaces right after.
func deltaBase(prev, cur *source.Sample) *source.Sample {
	if cur.Ping10s.InFlight == cur.Ping.InFlight {
		prev.Ping10s.InFlight = cur.Ping10s.InFlight
	} else if prev.Ping10s.InFlight == cur.Ping10s.InFlight {
		prev.Ping10s.InFlight = cur.Ping10s.InFlight + 1
	}
	if cur.Save != nil && prev.Save != nil {
		// (A save that is new to this delta is written whole.) The ETA
		// derived from prev's before prev's is changed.
		eta, derived := cur.Save.ETA, etaDerived(prev, cur)
		if cur.Save.Elapsed == cur.Offset-cur.Save.Started {
			prev.Save.Elapsed = cur.Save.Elapsed
		} else if prev.Save.Elapsed == cur.Save.Elapsed {
			prev.Save.Elapsed = cur.Save.Elapsed + 1
		}
		if eta == derived {
			prev.Save.ETA = eta
		} else if prev.Save.ETA == eta {
			prev.Save.ETA = source.Some(eta.V + 1) // present, and not eta
		}
	}
	return prev
}

// etaDerived is the ETA a version 7 delta of cur that leaves save.eta_s out
// means, prev being the node's sample before it.
func etaDerived(prev, cur *source.Sample) source.Opt[time.Duration] {
	if eta, ok := cur.Info.ForklessETA.Get(); ok && eta >= 0 {
		return source.Some(time.Duration(eta) * time.Second)
	}
	if prev.Save != nil && prev.Save.ETA.OK {
		return source.Some(prev.Save.ETA.V - (cur.Offset - prev.Offset))
	}
	return source.Opt[time.Duration]{}
}

// fitETA records cur's ETA (the writer's copy) as etaDerived's when that
// rounds to the live figure's saveStep, so that the delta leaves it out.
func fitETA(prev, cur *source.Sample, live source.Opt[time.Duration]) {
	if cur.Save == nil || prev.Save == nil || !live.OK {
		return
	}
	if d := etaDerived(prev, cur); d.OK && d.V.Round(saveStep) == live.V.Round(saveStep) {
		cur.Save.ETA = d
	}
}

// fillDerived sets the fields a delta line of version 5 or later left out
// to what they are derived from: delta is the line's delta object, has
// says which of its top-level keys it holds.
func fillDerived(s, base *source.Sample, delta []byte, has func(key string) bool, version int) {
	d := *s
	source.Derive(&d)
	have, derived := derivedFields(s), derivedFields(&d)
	for i, k := range derivedKeys {
		if !has(k) {
			reflect.ValueOf(have[i]).Elem().Set(reflect.ValueOf(derived[i]).Elem())
		}
	}
	if version < 6 {
		return
	}
	if memberOf(memberOf(delta, "ping10s"), "in_flight_us") == nil {
		s.Ping10s.InFlight = s.Ping.InFlight
	}
	if s.Save == nil {
		return
	}
	save := memberOf(delta, "save")
	elapsed := memberOf(save, "elapsed_s") == nil
	eta := version >= 7 && base.Save != nil && memberOf(save, "eta_s") == nil
	if elapsed || eta {
		sv := *s.Save // perhaps the base's, which stays as it is
		if elapsed {
			sv.Elapsed = s.Offset - sv.Started
		}
		if eta {
			sv.ETA = etaDerived(base, s)
		}
		s.Save = &sv
	}
}

// memberOf is the value of member key of the JSON object obj, nil when
// it has none (or obj is nil or no object as the writer writes them).
func memberOf(obj []byte, key string) []byte {
	if obj == nil {
		return nil
	}
	w, ok := walkObject(obj)
	if !ok {
		return nil
	}
	var val []byte
	for {
		k, v, esc, more := w.next()
		if !more {
			return val
		}
		if !esc && string(k) == key {
			val = v // the last one wins, as in the decoder
		}
	}
}

package record

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vkwatch/vkwatch/source"
)

// Reading the codec's JSON back (the rules are in codec.go). A seek
// decodes a few thousand samples of a hundred fields each, so objects are
// not split into maps by encoding/json: a walk over each object's bytes
// looks its keys up in the struct's field table and decodes each value in
// place.
//
// The walk trusts that its input is valid JSON: decodeEvent checks each
// line once with json.Valid (the header's parts come from encoding/json).
// It never reads out of bounds on any input, and whatever shape it does not
// expect (a value that is not an object where a struct is, a key with
// escapes, a bad number) goes to the map-based reading, decodeObjectMap,
// which reads it, or says what is wrong with it, as it always did. Members
// are applied in the field table's order and a repeated key's last value
// wins, as with the map.

// walkDecode switches the walk off, for the test that compares it with the
// map-based reading.
var walkDecode = true

// member is one member of an object read into a struct: the position of
// its field in fieldsOf, and the value's bytes.
type member struct {
	pos int
	raw []byte
}

// fieldSet is a set of field positions in fieldsOf order (the first 128;
// no recorded struct has more than 64 fields).
type fieldSet [2]uint64

func (s *fieldSet) add(i int) {
	if i >= 0 && i < 128 {
		s[i/64] |= 1 << (i % 64)
	}
}

func (s fieldSet) has(i int) bool { return i >= 0 && i < 128 && s[i/64]&(1<<(i%64)) != 0 }

var keyIndexCache sync.Map // reflect.Type -> map[string]int

// keyIndex maps struct type t's keys to their positions in fieldsOf(t).
func keyIndex(t reflect.Type) map[string]int {
	if m, ok := keyIndexCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i, f := range fieldsOf(t) {
		m[f.key] = i
	}
	keyIndexCache.Store(t, m)
	return m
}

// fieldPos is the position of key in fieldsOf(t), -1 when none.
func fieldPos(t reflect.Type, key string) int {
	if i, ok := keyIndex(t)[key]; ok {
		return i
	}
	return -1
}

// decodeStruct fills struct value v from a JSON object. Keys missing from
// the object leave their fields zero (an Opt absent), so a recording written
// before a field existed still reads.
func decodeStruct(raw json.RawMessage, v reflect.Value) error {
	_, err := decodeObject(raw, v)
	return err
}

// decodeObject is decodeStruct saying which fields the object held.
func decodeObject(raw []byte, v reflect.Value) (fieldSet, error) {
	var buf [64]member
	members, ok := objectMembers(raw, v.Type(), buf[:0])
	if !ok {
		return decodeObjectMap(raw, v)
	}
	fields := fieldsOf(v.Type())
	var present fieldSet
	for _, m := range members {
		present.add(m.pos)
		f := fields[m.pos]
		if err := decodeValue(m.raw, v.Field(f.index), f.scale); err != nil {
			return present, &fieldError{f.key, err}
		}
	}
	return present, nil
}

// fieldError is a struct field's error, as "key: error" (or
// "outer.key: error" through prefixed).
type fieldError struct {
	key string
	err error
}

func (e *fieldError) Error() string { return e.key + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// prefixed names the event member an object's error is in: "delta.key:"
// for one of its fields, "delta:" for the object itself.
func prefixed(name string, err error) error {
	if _, ok := err.(*fieldError); ok {
		return fmt.Errorf("%s.%w", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// decodeObjectMap is decodeObject through encoding/json's map: for what
// the walk leaves to it, and for its errors.
func decodeObjectMap(raw []byte, v reflect.Value) (fieldSet, error) {
	var present fieldSet
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return present, err
	}
	for i, f := range fieldsOf(v.Type()) {
		raw, ok := m[f.key]
		if !ok {
			continue
		}
		present.add(i)
		if err := decodeValue(raw, v.Field(f.index), f.scale); err != nil {
			return present, &fieldError{f.key, err}
		}
	}
	return present, nil
}

// objectMembers walks the object raw and returns its members that are
// fields of struct type t, in fieldsOf order, a repeated key's last value
// only; false for what the map-based reading is to read.
func objectMembers(raw []byte, t reflect.Type, members []member) ([]member, bool) {
	fields := fieldsOf(t)
	w, ok := walkObject(raw)
	if !walkDecode || !ok || len(fields) > 128 {
		return nil, false
	}
	next := 0 // the writer writes fields in order: try the next one first
	for {
		key, val, esc, more := w.next()
		if !more {
			break
		}
		if esc {
			return nil, false
		}
		pos := -1
		if next < len(fields) && fields[next].key == string(key) {
			pos = next
		} else if i, ok := keyIndex(t)[string(key)]; ok {
			pos = i
		}
		if pos < 0 {
			continue // not a field (any more): ignored, as by the map
		}
		members = append(members, member{pos, val})
		next = pos + 1
	}
	if w.bad {
		return nil, false
	}
	// In field order (stably: of a repeated key, the last stays last)...
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j-1].pos > members[j].pos; j-- {
			members[j-1], members[j] = members[j], members[j-1]
		}
	}
	// ... and of a repeated key, the last value alone.
	out := members[:0]
	for i, m := range members {
		if i+1 < len(members) && members[i+1].pos == m.pos {
			continue
		}
		out = append(out, m)
	}
	return out, true
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// decodeValue sets v from raw; scale applies to durations.
func decodeValue(raw json.RawMessage, v reflect.Value, scale int) error {
	t := v.Type()
	if isOpt(t) {
		return decodeOpt(raw, v, scale)
	}
	if isNull(raw) {
		v.Set(reflect.Zero(t))
		return nil
	}
	switch {
	case t == durationType:
		n, err := parseDecimalBytes(bytes.TrimSpace(raw), scale)
		if err != nil {
			return err
		}
		v.SetInt(n)
		return nil
	case t == timeType:
		return decodeTime(raw, v)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return decodePointer(raw, v, scale)
	case reflect.Struct:
		_, err := decodeObject(raw, v)
		return err
	case reflect.Slice:
		return decodeSlice(raw, v, scale)
	case reflect.Array:
		return decodeArray(raw, v, scale)
	}
	if decodeScalar(raw, v) {
		return nil
	}
	// Other scalars (and the odd map) decode as plain JSON.
	p := reflect.New(t)
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return err
	}
	v.Set(p.Elem())
	return nil
}

// decodeOpt sets an Opt: absent for null, else its value, present.
func decodeOpt(raw []byte, v reflect.Value, scale int) error {
	if isNull(raw) {
		v.Set(reflect.Zero(v.Type()))
		return nil
	}
	if err := decodeValue(raw, v.Field(0), scale); err != nil {
		return err
	}
	v.Field(1).SetBool(true)
	return nil
}

func decodeTime(raw []byte, v reflect.Value) error {
	s, ok := plainString(raw)
	if !ok {
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	v.Set(reflect.ValueOf(tm))
	return nil
}

// decodePointer decodes onto a copy of what is there: a delta sample
// changes only some fields of its base's (never the base itself).
func decodePointer(raw []byte, v reflect.Value, scale int) error {
	p := reflect.New(v.Type().Elem())
	if !v.IsNil() {
		p.Elem().Set(v.Elem())
	}
	if err := decodeValue(raw, p.Elem(), scale); err != nil {
		return err
	}
	v.Set(p)
	return nil
}

func decodeSlice(raw []byte, v reflect.Value, scale int) error {
	var buf [16][]byte
	items, err := arrayItems(raw, buf[:0])
	if err != nil {
		return err
	}
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	if err := decodeItems(items, out, scale); err != nil {
		return err
	}
	v.Set(out)
	return nil
}

// decodeItems decodes items into the elements of slice or array v.
func decodeItems(items [][]byte, v reflect.Value, scale int) error {
	for i, item := range items {
		if err := decodeValue(item, v.Index(i), scale); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

func decodeArray(raw []byte, v reflect.Value, scale int) error {
	var buf [16][]byte
	items, err := arrayItems(raw, buf[:0])
	if err != nil {
		return err
	}
	if len(items) > v.Len() {
		return fmt.Errorf("%d elements for an array of %d", len(items), v.Len())
	}
	v.Set(reflect.Zero(v.Type()))
	return decodeItems(items, v, scale)
}

// arrayItems is the elements of the JSON array raw, by the walk or, for
// what it leaves, by encoding/json (and its error).
func arrayItems(raw []byte, items [][]byte) ([][]byte, error) {
	if got, ok := walkArray(raw, items); ok && walkDecode {
		return got, nil
	}
	var all []json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	items = items[:0]
	for _, it := range all {
		items = append(items, it)
	}
	return items, nil
}

// plainString is the JSON string raw when it needs no unescaping: quoted,
// no backslash, valid UTF-8 (encoding/json would replace a bad byte).
func plainString(raw []byte) (string, bool) {
	if !plainStringBytes(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

func plainStringBytes(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	in := raw[1 : len(raw)-1]
	return bytes.IndexByte(in, '\\') < 0 && bytes.IndexByte(in, '"') < 0 && utf8.Valid(in)
}

// decodeScalar sets v from raw for the plain numbers, booleans and
// strings nearly every recorded field is, without json.Unmarshal's
// reflection and allocation. It says false to leave anything else (a
// string with escapes, a number in exponent form, a bad value) to
// json.Unmarshal, which reads it, or says what is wrong, as before.
func decodeScalar(raw json.RawMessage, v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil || v.OverflowUint(n) {
			return false
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		if bytes.ContainsAny(raw, "+_xXpPiInN") { // JSON has no hex, inf, nan or 1_000
			return false
		}
		f, err := strconv.ParseFloat(string(raw), v.Type().Bits())
		if err != nil {
			return false
		}
		v.SetFloat(f)
	case reflect.Bool:
		switch string(raw) {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			return false
		}
	case reflect.String:
		s, ok := plainString(raw)
		if !ok {
			return false
		}
		v.SetString(s)
	default:
		return false
	}
	return true
}

// parseDecimalBytes is parseDecimal for the plain decimals the writer
// writes (digits, a point, at most 18 digits in all), without its
// allocations; anything else goes to parseDecimal.
func parseDecimalBytes(b []byte, scale int) (int64, error) {
	s := b
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var n int64
	digits, frac, point := 0, 0, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			if point {
				if frac == scale {
					continue // finer than a nanosecond: cannot be held
				}
				frac++
			}
			n = n*10 + int64(c-'0')
			digits++
		case c == '.' && !point && scale > 0:
			point = true
		default:
			return parseDecimal(string(b), scale)
		}
	}
	if digits == 0 || digits+scale-frac > 18 {
		return parseDecimal(string(b), scale)
	}
	for ; frac < scale; frac++ {
		n *= 10
	}
	if neg {
		n = -n
	}
	return n, nil
}

// The walk, over valid JSON. Each step is bounds-checked and moves
// forward, so on any input it ends, saying bad where the input is not
// what it expects.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string starting at b[i] (a quote), and
// whether it holds escapes; -1 when it does not end.
func stringEnd(b []byte, i int) (int, bool) {
	esc := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			esc = true
			i++
		case '"':
			return i + 1, esc
		}
	}
	return -1, esc
}

// valueEnd is the index after the value starting at b[i], -1 when it does
// not end.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		e, _ := stringEnd(b, i)
		return e
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e, _ := stringEnd(b, i)
				if e < 0 {
					return -1
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
scalar:
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			break scalar
		}
	}
	if i == start {
		return -1
	}
	return i
}

// objectWalk walks the members of one JSON object.
type objectWalk struct {
	b         []byte
	i         int
	done, bad bool
}

// walkObject starts a walk of the object b (whitespace around it
// allowed); false when b does not start as an object.
func walkObject(b []byte) (objectWalk, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return objectWalk{}, false
	}
	w := objectWalk{b: b, i: skipWS(b, i+1)}
	if w.i < len(b) && b[w.i] == '}' {
		w.done = true
		w.bad = skipWS(b, w.i+1) != len(b)
	}
	return w, true
}

// next is the next member's key (without its quotes; esc when it holds
// escapes) and value; more is false at the end, where bad says whether
// the object was not as expected.
func (w *objectWalk) next() (key, val []byte, esc, more bool) {
	if w.done || w.bad {
		return nil, nil, false, false
	}
	b, i := w.b, w.i
	w.bad = true // until this member is whole
	if i >= len(b) || b[i] != '"' {
		return nil, nil, false, false
	}
	e, esc := stringEnd(b, i)
	if e < 0 {
		return nil, nil, false, false
	}
	key = b[i+1 : e-1]
	i = skipWS(b, e)
	if i >= len(b) || b[i] != ':' {
		return nil, nil, false, false
	}
	i = skipWS(b, i+1)
	ve := valueEnd(b, i)
	if ve < 0 {
		return nil, nil, false, false
	}
	val = b[i:ve]
	i = skipWS(b, ve)
	if i >= len(b) {
		return nil, nil, false, false
	}
	switch b[i] {
	case ',':
		w.i = skipWS(b, i+1)
	case '}':
		w.done = true
		if skipWS(b, i+1) != len(b) {
			return nil, nil, false, false
		}
	default:
		return nil, nil, false, false
	}
	w.bad = false
	return key, val, esc, true
}

// walkArray appends the elements of the JSON array b to items; false when
// b is not an array as expected.
func walkArray(b []byte, items [][]byte) ([][]byte, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return items, skipWS(b, i+1) == len(b)
	}
	for {
		ve := valueEnd(b, i)
		if ve < 0 {
			return nil, false
		}
		items = append(items, b[i:ve])
		i = skipWS(b, ve)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return items, skipWS(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// errNoBase is decodeEvent's error for a delta sample whose node has no
// sample read before it.
var errNoBase = errors.New("delta sample without a full sample before it")

// The members of an event line an event is read from, by their place in
// eventParts.
const (
	partKind = iota
	partNode
	partServer
	partT
	partDelta
	partSample
	partIdentity
	partErr
	partCommand
	partReport
	partTopology
	nParts
)

// partKeys are the keys of the members, by their place.
var partKeys = [nParts]string{"kind", "node", "server", "t", "delta", "sample", "identity", "err", "command", "report", "topology"}

var partIndex = func() map[string]int {
	m := map[string]int{}
	for i, k := range partKeys {
		m[k] = i
	}
	return m
}()

// eventParts are the members of an event line, nil where absent.
type eventParts [nParts][]byte

// slot is where the value of the member key goes; nil for a key events
// do not have (or "at", which is derived).
func (p *eventParts) slot(key string) *[]byte {
	if i, ok := partIndex[key]; ok {
		return &p[i]
	}
	return nil
}

// splitEvent splits an event line into its members, checking once that
// the line is valid JSON.
func splitEvent(line []byte) (eventParts, error) {
	var p eventParts
	var m map[string]json.RawMessage
	if !json.Valid(line) {
		return p, json.Unmarshal(line, &m) // encoding/json's own words for it
	}
	if w, ok := walkObject(line); ok && walkDecode {
		for {
			key, val, esc, more := w.next()
			if !more || esc {
				w.bad = w.bad || esc
				break
			}
			if s := p.slot(string(key)); s != nil {
				*s = val
			}
		}
		if !w.bad {
			return p, nil
		}
		p = eventParts{}
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return p, err
	}
	for k, v := range m {
		if s := p.slot(k); s != nil {
			*s = v
		}
	}
	return p, nil
}

func decodeEvent(line []byte, h *Header, bases map[source.NodeID]*source.Sample) (source.Event, error) {
	var ev source.Event
	p, err := splitEvent(line)
	if err != nil {
		return ev, err
	}
	if err := p.head(&ev, h); err != nil {
		return ev, err
	}
	if p[partDelta] != nil {
		if err := p.decodeDelta(&ev, h, bases); err != nil {
			return ev, err
		}
	}
	if p[partSample] != nil && !isNull(p[partSample]) {
		if err := p.decodeSample(&ev, bases); err != nil {
			return ev, err
		}
	}
	return ev, p.decodeParts(&ev)
}

// head reads the event's kind, node and time.
func (p *eventParts) head(ev *source.Event, h *Header) error {
	var k source.EventKind
	var ok bool
	if plainStringBytes(p[partKind]) {
		k, ok = kinds[string(p[partKind][1:len(p[partKind])-1])]
	}
	if !ok {
		var kind string
		if err := json.Unmarshal(p[partKind], &kind); err != nil {
			return fmt.Errorf("no event kind")
		}
		if k, ok = kinds[kind]; !ok {
			return fmt.Errorf("unknown event kind %q", kind)
		}
	}
	ev.Kind = k
	if p[partNode] != nil {
		if err := decodeString(p[partNode], (*string)(&ev.Node)); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	} else {
		// Version 1: the server's position in the header.
		var i int
		if err := json.Unmarshal(p[partServer], &i); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		if i < 0 || i >= len(h.Servers) {
			return fmt.Errorf("server %d: the header lists %d", i, len(h.Servers))
		}
		ev.Node = h.Servers[i].Node
	}
	if p[partT] == nil {
		return fmt.Errorf("no offset t")
	}
	off, err := parseDecimalBytes(bytes.TrimSpace(p[partT]), 9)
	if err != nil {
		return fmt.Errorf("t: %w", err)
	}
	ev.Offset = time.Duration(off)
	// at is written as epoch + t; derive it the same way rather than trust
	// a hand-edited copy, so the two can never disagree.
	ev.At = h.Epoch.Add(ev.Offset)
	return nil
}

// decodeString reads a JSON string (or null, which leaves s as it is).
func decodeString(raw []byte, s *string) error {
	if v, ok := plainString(raw); ok {
		*s = v
		return nil
	}
	return json.Unmarshal(raw, s)
}

var sampleType = reflect.TypeOf(source.Sample{})

// decodeDelta reads a delta sample onto a copy of its node's last one.
func (p *eventParts) decodeDelta(ev *source.Event, h *Header, bases map[source.NodeID]*source.Sample) error {
	base := bases[ev.Node]
	if base == nil {
		return errNoBase
	}
	s := new(source.Sample)
	*s = *base
	s.Seq++
	s.Offset, s.At = ev.Offset, ev.At
	present, err := decodeObject(p[partDelta], reflect.ValueOf(s).Elem())
	if err != nil {
		return prefixed("delta", err)
	}
	if h.Version >= 5 {
		fillDerived(s, base, p[partDelta], func(k string) bool { return present.has(fieldPos(sampleType, k)) }, h.Version)
	}
	ev.Sample = s
	bases[ev.Node] = s
	return nil
}

// decodeSample reads a whole sample.
func (p *eventParts) decodeSample(ev *source.Event, bases map[source.NodeID]*source.Sample) error {
	s := new(source.Sample)
	present, err := decodeObject(p[partSample], reflect.ValueOf(s).Elem())
	if err != nil {
		return prefixed("sample", err)
	}
	has := func(k string) bool { return present.has(fieldPos(sampleType, k)) }
	if !has("offset_s") {
		s.Offset = ev.Offset
	}
	if !has("at") {
		s.At = ev.At
	}
	if !has("cow_from") {
		// Written before the instruments existed: derive them from the
		// recorded INFO and /proc figures, as the watcher does.
		source.Derive(s)
	}
	ev.Sample = s
	if bases != nil && ev.Kind == source.EventSample {
		bases[ev.Node] = s
	}
	return nil
}

// decodeParts reads what else an event may carry; of several errors, the
// first member's.
func (p *eventParts) decodeParts(ev *source.Event) error {
	var errs [nParts]error
	errs[partIdentity] = decodePart(p, partIdentity, &ev.Identity)
	if p[partErr] != nil {
		if err := decodeString(p[partErr], &ev.Err); err != nil {
			errs[partErr] = fmt.Errorf("err: %w", err)
		}
	}
	errs[partCommand] = decodePart(p, partCommand, &ev.Command)
	errs[partReport] = decodePart(p, partReport, &ev.Report)
	errs[partTopology] = decodePart(p, partTopology, &ev.Topology)
	return cmp.Or(errs[:]...)
}

// decodePart reads member i of the event, a struct, into a new value at
// *dst; absent or null, it leaves *dst nil.
func decodePart[T any](p *eventParts, i int, dst **T) error {
	raw := p[i]
	if raw == nil || isNull(raw) {
		return nil
	}
	*dst = new(T)
	if err := decodeStruct(raw, reflect.ValueOf(*dst).Elem()); err != nil {
		return fmt.Errorf("%s.%w", partKeys[i], err)
	}
	return nil
}

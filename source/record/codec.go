package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unsafe"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// The payload structs of source (Sample, Info, SaveReport, ...) are written
// by reflection rather than through hand-written mirror structs, so a field
// added to source/types.go is recorded and read back without touching this
// package. The rules:
//
//   - keys are the Go field names in snake_case (UsedMemory -> used_memory,
//     RDBLastCOW -> rdb_last_cow);
//   - an Opt is null when absent and its value when present (absent is not
//     zero, and a reader sees the difference);
//   - a time.Duration is a decimal number of seconds with key suffix "_s",
//     or of microseconds with suffix "_us" inside a Latency; the decimal is
//     exact to the nanosecond, so a replay sees the very durations the live
//     run saw;
//   - a time.Time is RFC 3339 with nanoseconds;
//   - a fixed-size array (Info.Replicas) is a JSON array up to its last
//     non-zero element: the rest reads back as zero.
//
// Non-finite floats, which JSON cannot hold, are written as null.

var (
	durationType = reflect.TypeOf(time.Duration(0))
	timeType     = reflect.TypeOf(time.Time{})
	latencyType  = reflect.TypeOf(source.Latency{})
	sourcePkg    = reflect.TypeOf(source.Latency{}).PkgPath()
)

var optCache sync.Map // reflect.Type -> bool

// isOpt reports whether t is an instance of source.Opt (cached: it is
// asked for every field the writer writes).
func isOpt(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	if v, ok := optCache.Load(t); ok {
		return v.(bool)
	}
	is := t.PkgPath() == sourcePkg && strings.HasPrefix(t.Name(), "Opt[")
	optCache.Store(t, is)
	return is
}

// unitOf tells how a duration field is written: microseconds inside a
// Latency (PING round trips are small), seconds elsewhere.
func unitOf(parent reflect.Type) (scale int, suffix string) {
	if parent == latencyType {
		return 3, "_us"
	}
	return 9, "_s"
}

// fieldInfo is one recorded field of a struct.
type fieldInfo struct {
	index  int
	key    string
	quoted string // `"key":`, as the writer writes it
	scale  int    // digits after the point for a duration: 9 (s) or 3 (µs); 0 otherwise
	offset uintptr
	typ    reflect.Type
	// eq compares two values of the field's type in place and put writes
	// one from its address, for the types most of a sample's fields are
	// (typedOps); nil for the others.
	eq  func(a, b unsafe.Pointer) bool
	put func(e *encoder, p unsafe.Pointer, scale int)
	// sub are the fields of a struct field that is neither an Opt nor a
	// time (nil otherwise): what a delta compares of it, one by one.
	sub []fieldInfo
	// same compares two such structs whole, for those that mostly do not
	// change from one sample to the next (sameFor); nil for the others.
	same func(a, b unsafe.Pointer) bool
}

var fieldCache sync.Map // reflect.Type -> []fieldInfo

// fieldsOf lists the exported fields of struct type t with their keys.
func fieldsOf(t reflect.Type) []fieldInfo {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]fieldInfo)
	}
	var out []fieldInfo
	seen := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		fi := fieldInfo{index: i, key: snake(sf.Name), offset: sf.Offset, typ: sf.Type}
		fi.eq, fi.put = typedOps(sf.Type)
		ft := sf.Type
		if isOpt(ft) {
			ft = ft.Field(0).Type
		}
		if ft == durationType {
			scale, suffix := unitOf(t)
			fi.scale = scale
			fi.key += suffix
		}
		if other, dup := seen[fi.key]; dup {
			// A programming error in source/types.go naming; caught by the
			// round-trip test long before a user sees it.
			panic(fmt.Sprintf("record: fields %s and %s of %s share key %q", other, sf.Name, t, fi.key))
		}
		if sf.Type.Kind() == reflect.Struct && !isOpt(sf.Type) && sf.Type != timeType {
			// A struct held by value cannot hold t itself: no recursion
			// without end. (One with unexported fields is compared whole.)
			if sub := fieldsOf(sf.Type); len(sub) == sf.Type.NumField() {
				fi.sub, fi.same = sub, sameFor(sf.Type)
			}
		}
		seen[fi.key] = sf.Name
		fi.quoted = strconv.Quote(fi.key) + ":" // snake_case ASCII: no escapes
		out = append(out, fi)
	}
	fieldCache.Store(t, out)
	return out
}

// snake turns a Go field name into snake_case, keeping acronyms whole:
// RDBLastCOW -> rdb_last_cow, ProcessID -> process_id, P50 -> p50.
func snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// encoder writes ordered JSON objects.
type encoder struct {
	buf   bytes.Buffer
	first []bool // per open object: no member written yet
}

func (e *encoder) open() {
	e.buf.WriteByte('{')
	e.first = append(e.first, true)
}

func (e *encoder) close() {
	e.buf.WriteByte('}')
	e.first = e.first[:len(e.first)-1]
}

func (e *encoder) key(k string) {
	e.comma()
	e.str(k)
	e.buf.WriteByte(':')
}

// fieldKey writes a struct field's key, quoted once for all by fieldsOf.
func (e *encoder) fieldKey(f *fieldInfo) {
	e.comma()
	e.buf.WriteString(f.quoted)
}

func (e *encoder) comma() {
	if !e.first[len(e.first)-1] {
		e.buf.WriteByte(',')
	}
	e.first[len(e.first)-1] = false
}

func (e *encoder) str(s string) {
	if plainASCII(s) {
		// What json.Marshal writes for it, without its allocations.
		e.buf.WriteByte('"')
		e.buf.WriteString(s)
		e.buf.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s) // cannot fail for a string
	// The exact text, with the C1 and bidi controls JSON leaves raw
	// escaped too, so that a recording is safe to print (issue 16).
	e.buf.Write(inert.JSON(b))
}

// time writes tm as RFC 3339 with nanoseconds, in quotes (the format has
// nothing JSON escapes).
func (e *encoder) time(tm time.Time) {
	e.buf.WriteByte('"')
	e.buf.Write(tm.AppendFormat(e.buf.AvailableBuffer(), time.RFC3339Nano))
	e.buf.WriteByte('"')
}

// decimal writes n / 10^scale as formatDecimal does.
func (e *encoder) decimal(n int64, scale int) {
	e.buf.Write(appendDecimal(e.buf.AvailableBuffer(), n, scale))
}

// reset empties e for the next line, keeping its buffers.
func (e *encoder) reset() {
	e.buf.Reset()
	e.first = e.first[:0]
}

// plainASCII says whether json.Marshal writes s as it is, in quotes:
// printable ASCII without the characters it escapes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// structFields writes the fields of struct value v as members of the open
// object, leaving out the fields in skip.
func (e *encoder) structFields(v reflect.Value, skip fieldSet) {
	var p unsafe.Pointer
	if v.CanAddr() {
		p = unsafe.Pointer(v.UnsafeAddr())
	}
	fields := fieldsOf(v.Type())
	for i := range fields {
		f := &fields[i]
		if skip.has(i) {
			continue
		}
		e.fieldKey(f)
		if f.put != nil && p != nil {
			f.put(e, unsafe.Add(p, f.offset), f.scale)
			continue
		}
		e.value(v.Field(f.index), f.scale)
	}
}

// fieldSetOf is the set of t's fields with the given keys.
func fieldSetOf(t reflect.Type, keys ...string) fieldSet {
	var s fieldSet
	for _, k := range keys {
		i, ok := keyIndex(t)[k]
		if !ok {
			panic(fmt.Sprintf("record: %s has no field %q", t, k))
		}
		s.add(i)
	}
	return s
}

// value writes one value; scale applies to durations.
func (e *encoder) value(v reflect.Value, scale int) {
	t := v.Type()
	switch {
	case isOpt(t):
		if !v.Field(1).Bool() {
			e.buf.WriteString("null")
			return
		}
		e.value(v.Field(0), scale)
	case t == durationType:
		e.decimal(v.Int(), scale)
	case t == timeType:
		e.timeOrNull(v.Interface().(time.Time))
	default:
		e.kindValue(v, scale)
	}
}

// kindValue writes a value that is no Opt, duration or time, by its kind.
func (e *encoder) kindValue(v reflect.Value, scale int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			e.buf.WriteString("null")
			return
		}
		e.value(v.Elem(), scale)
	case reflect.Struct:
		e.open()
		e.structFields(v, fieldSet{})
		e.close()
	case reflect.String:
		e.str(v.String())
	case reflect.Bool:
		e.bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.buf.Write(strconv.AppendUint(e.buf.AvailableBuffer(), v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		e.float(v.Float(), v.Type().Bits())
	case reflect.Slice:
		// Element by element, so a slice of structs follows the same rules
		// (an Opt inside is null or its value). A nil slice is null.
		if v.IsNil() {
			e.buf.WriteString("null")
			return
		}
		e.elements(v, v.Len(), scale)
	case reflect.Array:
		// Up to its last non-zero element: the rest reads back as zero.
		n := v.Len()
		for n > 0 && v.Index(n-1).IsZero() {
			n--
		}
		e.elements(v, n, scale)
	default:
		// Maps: none in source's payloads today; plain JSON keeps a future
		// one recorded rather than lost.
		b, err := json.Marshal(v.Interface())
		if err != nil {
			e.buf.WriteString("null")
			return
		}
		e.buf.Write(inert.JSON(b))
	}
}

// elements writes the first n elements of slice or array v as a JSON array.
func (e *encoder) elements(v reflect.Value, n, scale int) {
	e.buf.WriteByte('[')
	for i := range n {
		if i > 0 {
			e.buf.WriteByte(',')
		}
		e.value(v.Index(i), scale)
	}
	e.buf.WriteByte(']')
}

// timeOrNull writes tm, or null for the zero time.
func (e *encoder) timeOrNull(tm time.Time) {
	if tm.IsZero() {
		e.buf.WriteString("null")
		return
	}
	e.time(tm)
}

func (e *encoder) bool(b bool) { e.buf.Write(strconv.AppendBool(e.buf.AvailableBuffer(), b)) }

func (e *encoder) int(n int64) { e.buf.Write(strconv.AppendInt(e.buf.AvailableBuffer(), n, 10)) }

// optInt writes o: null when absent, else its value.
func (e *encoder) optInt(o source.Opt[int64]) {
	if !o.OK {
		e.buf.WriteString("null")
		return
	}
	e.int(o.V)
}

// float writes f as the shortest decimal that reads back as it, and a
// non-finite one, which JSON cannot hold, as null.
func (e *encoder) float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.buf.WriteString("null")
		return
	}
	e.buf.Write(strconv.AppendFloat(e.buf.AvailableBuffer(), f, 'g', -1, bits))
}

// typedOps are a comparison in place of two values of type t and a writer
// of one from its address (what value writes), for the types nearly all
// of a sample's fields are; nil for the others, which sameValue compares
// and value writes (and the replicas have no put). In place and typed:
// the writer compares every field of every sample with its previous one
// and writes those that changed, and reflect's Field, Kind and Int on
// each were most of the writer's CPU at --interval 10ms. Floats compare as
// ==, so a NaN differs from itself, as in sameValue.
func typedOps(t reflect.Type) (eq func(a, b unsafe.Pointer) bool, put func(e *encoder, p unsafe.Pointer, scale int)) {
	switch t {
	case reflect.TypeOf(source.Opt[int64]{}):
		return eqOf[source.Opt[int64]], func(e *encoder, p unsafe.Pointer, _ int) { e.optInt(*(*source.Opt[int64])(p)) }
	case reflect.TypeOf(source.Opt[float64]{}):
		return eqOf[source.Opt[float64]], putOpt(func(e *encoder, v float64, _ int) { e.float(v, 64) })
	case reflect.TypeOf(source.Opt[bool]{}):
		return eqOf[source.Opt[bool]], putOpt(func(e *encoder, v bool, _ int) { e.bool(v) })
	case reflect.TypeOf(source.Opt[time.Duration]{}):
		return eqOf[source.Opt[time.Duration]], putOpt(func(e *encoder, v time.Duration, scale int) { e.decimal(int64(v), scale) })
	case reflect.TypeOf(source.Opt[string]{}):
		return eqOf[source.Opt[string]], putOpt(func(e *encoder, v string, _ int) { e.str(v) })
	case reflect.TypeOf(source.Info{}.Replicas):
		return eqOf[[source.MaxReplicas]source.Replica], nil
	case durationType:
		return eqOf[int64], func(e *encoder, p unsafe.Pointer, scale int) { e.decimal(*(*int64)(p), scale) }
	}
	switch t.Kind() {
	case reflect.Int64:
		return eqOf[int64], func(e *encoder, p unsafe.Pointer, _ int) { e.int(*(*int64)(p)) }
	case reflect.Int:
		return eqOf[int], func(e *encoder, p unsafe.Pointer, _ int) { e.int(int64(*(*int)(p))) }
	case reflect.Uint64:
		return eqOf[uint64], func(e *encoder, p unsafe.Pointer, _ int) {
			e.buf.Write(strconv.AppendUint(e.buf.AvailableBuffer(), *(*uint64)(p), 10))
		}
	case reflect.Bool:
		return eqOf[bool], func(e *encoder, p unsafe.Pointer, _ int) { e.bool(*(*bool)(p)) }
	case reflect.String:
		return eqOf[string], func(e *encoder, p unsafe.Pointer, _ int) { e.str(*(*string)(p)) }
	}
	return nil, nil
}

// putOpt writes an Opt[T] from its address: null when absent, else its
// value by put.
func putOpt[T any](put func(e *encoder, v T, scale int)) func(e *encoder, p unsafe.Pointer, scale int) {
	return func(e *encoder, p unsafe.Pointer, scale int) {
		o := (*source.Opt[T])(p)
		if !o.OK {
			e.buf.WriteString("null")
			return
		}
		put(e, o.V, scale)
	}
}

// formatDecimal writes n / 10^scale as an exact decimal without trailing
// zeros: 1500000000 at scale 9 is "1.5".
func formatDecimal(n int64, scale int) string {
	return string(appendDecimal(nil, n, scale))
}

// appendDecimal is formatDecimal appending to dst, without allocating
// when dst has room (the writer formats a few durations every sample).
func appendDecimal(dst []byte, n int64, scale int) []byte {
	if scale == 0 {
		return strconv.AppendInt(dst, n, 10)
	}
	u := uint64(n)
	if n < 0 {
		dst = append(dst, '-')
		u = -u // two's complement: right for math.MinInt64 too
	}
	p := pow10[scale]
	dst = strconv.AppendUint(dst, u/p, 10)
	frac := u % p
	if frac == 0 {
		return dst
	}
	digits := scale
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	dst = append(dst, '.')
	for range digits - decimalLen(frac) {
		dst = append(dst, '0')
	}
	return strconv.AppendUint(dst, frac, 10)
}

// pow10 are the scales appendDecimal takes, up to nanoseconds.
var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// decimalLen is the number of decimal digits of n (1 for 0).
func decimalLen(n uint64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// parseDecimal reads a number written by formatDecimal back into units of
// 10^-scale, exactly. Numbers in exponent form (a hand-edited file) go
// through float64.
func parseDecimal(s string, scale int) (int64, error) {
	if strings.ContainsAny(s, "eE") || scale == 0 && strings.Contains(s, ".") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, err
		}
		return int64(math.Round(f * math.Pow10(scale))), nil
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > scale {
		frac = frac[:scale] // finer than a nanosecond: cannot be held
	}
	frac += strings.Repeat("0", scale-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	if neg {
		n = -n
	}
	return n, nil
}

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
	// eq compares two values of the field's type in place, for the types
	// most of a sample's fields are (equalFor); nil for the others.
	eq func(a, b unsafe.Pointer) bool
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
		fi := fieldInfo{index: i, key: snake(sf.Name), offset: sf.Offset, eq: equalFor(sf.Type)}
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
func (e *encoder) fieldKey(f fieldInfo) {
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
// object, leaving out the keys in skip.
func (e *encoder) structFields(v reflect.Value, skip map[string]bool) {
	for _, f := range fieldsOf(v.Type()) {
		if skip[f.key] {
			continue
		}
		e.fieldKey(f)
		e.value(v.Field(f.index), f.scale)
	}
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
		return
	case t == durationType:
		e.buf.Write(appendDecimal(e.buf.AvailableBuffer(), v.Int(), scale))
		return
	case t == timeType:
		tm := v.Interface().(time.Time)
		if tm.IsZero() {
			e.buf.WriteString("null")
			return
		}
		e.time(tm)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			e.buf.WriteString("null")
			return
		}
		e.value(v.Elem(), scale)
	case reflect.Struct:
		e.open()
		e.structFields(v, nil)
		e.close()
	case reflect.String:
		e.str(v.String())
	case reflect.Bool:
		e.buf.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf.Write(strconv.AppendInt(e.buf.AvailableBuffer(), v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.buf.Write(strconv.AppendUint(e.buf.AvailableBuffer(), v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			e.buf.WriteString("null")
			return
		}
		e.buf.Write(strconv.AppendFloat(e.buf.AvailableBuffer(), f, 'g', -1, t.Bits()))
	case reflect.Slice:
		// Element by element, so a slice of structs follows the same rules
		// (an Opt inside is null or its value). A nil slice is null.
		if v.IsNil() {
			e.buf.WriteString("null")
			return
		}
		e.buf.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.value(v.Index(i), scale)
		}
		e.buf.WriteByte(']')
	case reflect.Array:
		n := v.Len()
		for n > 0 && v.Index(n-1).IsZero() {
			n--
		}
		e.buf.WriteByte('[')
		for i := range n {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.value(v.Index(i), scale)
		}
		e.buf.WriteByte(']')
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

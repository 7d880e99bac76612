package source

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// An Opt in JSON (recordings, reports) is its value, or null when absent;
// a recording leaves an absent figure out (omitzero, IsZero), and a figure
// left out reads back absent. A float JSON cannot hold (NaN, an infinity)
// is written as null. MarshalJSONTo and UnmarshalJSONFrom are the same for
// encoding/json/v2 (github.com/go-json-experiment/json, which recordings
// are written with), without an allocation for the types of most figures.

// MarshalJSON writes the value, null when absent. A float JSON cannot
// hold (NaN, an infinity) is written as null: absent.
func (o Opt[T]) MarshalJSON() ([]byte, error) {
	if !o.OK {
		return []byte("null"), nil
	}
	// The types of most figures, without json.Marshal's reflection.
	switch v := any(o.V).(type) {
	case int64:
		return strconv.AppendInt(make([]byte, 0, 20), v, 10), nil
	case time.Duration:
		return strconv.AppendInt(make([]byte, 0, 20), int64(v), 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return []byte("null"), nil
		}
	case bool:
		return strconv.AppendBool(nil, v), nil
	}
	return json.Marshal(o.V)
}

// UnmarshalJSON reads a value, absent for null.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	*o = Opt[T]{}
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, &o.V); err != nil {
		return err
	}
	o.OK = true
	return nil
}

// MarshalJSONTo is MarshalJSON for encoding/json/v2.
func (o Opt[T]) MarshalJSONTo(enc *jsontext.Encoder) error {
	if !o.OK {
		return enc.WriteToken(jsontext.Null)
	}
	switch v := any(o.V).(type) {
	case int64:
		return enc.WriteToken(jsontext.Int(v))
	case time.Duration:
		return enc.WriteToken(jsontext.Int(int64(v)))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return enc.WriteToken(jsontext.Null)
		}
		return enc.WriteToken(jsontext.Float(v))
	case bool:
		return enc.WriteToken(jsontext.Bool(v))
	case string:
		return enc.WriteToken(jsontext.String(v))
	}
	return jsonv2.MarshalEncode(enc, o.V)
}

// UnmarshalJSONFrom is UnmarshalJSON for encoding/json/v2.
func (o *Opt[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*o = Opt[T]{}
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return err
	}
	if p, ok := any(&o.V).(*time.Duration); ok {
		var n int64
		if err := jsonv2.UnmarshalDecode(dec, &n); err != nil {
			return err
		}
		*p = time.Duration(n)
	} else if err := jsonv2.UnmarshalDecode(dec, &o.V); err != nil {
		return err
	}
	o.OK = true
	return nil
}

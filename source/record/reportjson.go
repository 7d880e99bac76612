package record

import (
	"encoding/json"
	"errors"
	"reflect"

	"github.com/vkwatch/vkwatch/source"
)

// MarshalReports writes save reports as a JSON array with the recording's
// conventions: snake_case keys, null for a value the server did not report
// (absent is not zero), durations as exact decimal seconds ("_s") or
// microseconds inside a latency ("_us"), times as RFC 3339. --report and
// bench --json use it so every file vkwatch writes reads the same way.
func MarshalReports(reports []source.SaveReport) ([]byte, error) {
	var e encoder
	e.buf.WriteString("[\n")
	for i := range reports {
		if i > 0 {
			e.buf.WriteString(",\n")
		}
		e.buf.WriteString("  ")
		e.value(reflect.ValueOf(reports[i]), 9)
	}
	e.buf.WriteString("\n]\n")
	// Check what was written is valid JSON: a bug here must not hand a user
	// a file their tools cannot read.
	if !json.Valid(e.buf.Bytes()) {
		return nil, errInvalidJSON
	}
	return e.buf.Bytes(), nil
}

var errInvalidJSON = errors.New("record: report encoding produced invalid JSON")

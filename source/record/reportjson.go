package record

import (
	"bytes"
	json "github.com/go-json-experiment/json"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// MarshalReports writes save reports as a JSON array, one report a line,
// each as a recording's save_ended event holds it (FORMAT.md): snake_case
// keys, a figure the server did not report left out (absent is not zero),
// durations in nanoseconds ("_ns"), times as RFC 3339. --report and bench
// --json use it so every file vkwatch writes reads the same way.
func MarshalReports(reports []source.SaveReport) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i := range reports {
		b, err := json.Marshal(&reports[i], jsonOpts)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString("  ")
		buf.Write(inert.JSON(b))
	}
	buf.WriteString("\n]\n")
	return buf.Bytes(), nil
}

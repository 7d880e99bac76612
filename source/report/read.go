package report

import (
	"bytes"
	"io"
	"runtime"
	"sync"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
)

// minPiece is the least a parallel piece of a recording holds: below it
// the goroutines cost more than they save.
const minPiece = 4 << 20

// readRecording reads a recording through record.Read. A plain (not
// compressed) one is cut at line ends into a piece per CPU, each read by
// record.Read behind the file's own header line, and the events joined in
// order: an hour's recording of two servers is ~60 MiB of JSON, and its
// decoding is most of a report's time. Should any piece but the last end
// cut short or fail, the whole file is read again in one piece, so that an
// error names the line as record.Read counts it.
func readRecording(data []byte) (*record.Recording, error) {
	nl := bytes.IndexByte(data, '\n')
	n := min(runtime.GOMAXPROCS(0), len(data)/minPiece)
	if len(data) == 0 || data[0] != '{' || nl < 0 || n < 2 {
		return record.Read(bytes.NewReader(data))
	}
	head, body := data[:nl+1], data[nl+1:]
	var pieces [][]byte
	for len(body) > 0 && len(pieces) < n-1 {
		cut := len(body) / (n - len(pieces))
		i := bytes.IndexByte(body[cut:], '\n')
		if i < 0 {
			break
		}
		pieces = append(pieces, body[:cut+i+1])
		body = body[cut+i+1:]
	}
	if len(body) > 0 {
		pieces = append(pieces, body)
	}
	recs := make([]*record.Recording, len(pieces))
	errs := make([]error, len(pieces))
	var wg sync.WaitGroup
	for i, p := range pieces {
		wg.Go(func() {
			recs[i], errs[i] = record.Read(io.MultiReader(bytes.NewReader(head), bytes.NewReader(p)))
		})
	}
	wg.Wait()
	total := 0
	for i := range pieces {
		// A piece after the first that starts inside a chain of delta
		// samples (format 3) cannot read them: read the file whole.
		if errs[i] != nil || i < len(pieces)-1 && recs[i].Truncated || i > 0 && recs[i].Orphans > 0 {
			return record.Read(bytes.NewReader(data))
		}
		total += len(recs[i].Events)
	}
	out := recs[0]
	events := make([]source.Event, 0, total)
	for _, r := range recs {
		events = append(events, r.Events...)
	}
	out.Events = events
	out.Truncated = recs[len(recs)-1].Truncated
	return out, nil
}

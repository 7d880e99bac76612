package record

import (
	"bytes"
	"encoding/binary"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/vkwatch/vkwatch/source"
)

// synthFile writes span of six servers sampled every 200 ms as .zst (or
// .gz, at gzip's default level), the way the Writer frames and flushes it (a frame every 10 s with its mark,
// a flush every second), from the lines of the real busy recording in
// testdata as today's writer writes them: its whole samples and deltas,
// taken in turn, with t, at, node and seq set to the synthetic ones. The
// lines are put together as text rather than encoded again, so that a
// day of them (2.6 million samples) is made in about a minute; the
// figures they hold repeat every 40 s, which a replay does not mind.
func synthFile(b *testing.B, span time.Duration, c Compression) string {
	fulls, deltas, h := busyLines(b)
	path := filepath.Join(b.TempDir(), "synth.jsonl"+map[Compression]string{Zstd: ".zst", Gzip: ".gz"}[c])
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	h.Servers = nil
	for n := range 6 {
		h.Servers = append(h.Servers, ServerInfo{Node: source.NodeID("n" + strconv.Itoa(n)), Addr: "127.0.0.1:" + strconv.Itoa(7000+n)})
	}
	zstdLevel = zstd.SpeedFastest
	w, err := NewCompressedWriter(f, "jsonl", c, h)
	zstdLevel = zstd.SpeedDefault
	if err != nil {
		b.Fatal(err)
	}
	const every = 200 * time.Millisecond
	perFull := int(fullEvery / every)
	var line []byte
	var flushed time.Duration
	seq := uint64(0)
	for off := time.Duration(0); off < span; off += every {
		seq++
		w.mu.Lock()
		if off-flushed >= flushEvery {
			w.flushLocked()
			flushed = off
		}
		for n := range 6 {
			t := strconv.AppendFloat(nil, off.Seconds()+float64(n)*1e-4, 'f', 6, 64)
			node := []byte(`"n` + strconv.Itoa(n) + `"`)
			if (int(seq)-1)%perFull == 0 {
				at := h.Epoch.Add(off).UTC().Format(time.RFC3339Nano)
				line = append(line[:0], `{"t":`...)
				line = append(line, t...)
				line = append(line, `,"at":"`+at+`","node":`...)
				line = append(line, node...)
				line = append(line, `,"kind":"sample","sample":{"seq":`...)
				line = strconv.AppendUint(line, seq, 10)
				line = append(line, fulls[(int(seq)*6+n)%len(fulls)]...)
			} else {
				line = append(line[:0], `{"t":`...)
				line = append(line, t...)
				line = append(line, `,"node":`...)
				line = append(line, node...)
				line = append(line, `,"kind":"sample","delta":`...)
				line = append(line, deltas[(int(seq)*6+n)%len(deltas)]...)
			}
			w.startFrame(off)
			w.bw.Write(line)
			w.bw.WriteByte('\n')
		}
		w.mu.Unlock()
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

var busy struct {
	once          sync.Once
	fulls, deltas [][]byte
	h             Header
}

// busyLines are the busy recording's whole samples after their seq (from
// the comma on) and its delta objects, as today's Writer writes them.
func busyLines(b *testing.B) (fulls, deltas [][]byte, h Header) {
	busy.once.Do(func() {
		rf, err := OpenFile("testdata/busy-two-servers.jsonl.zst")
		if err != nil {
			b.Fatal(err)
		}
		defer rf.Close()
		sc, _ := rf.ScanFrom(0)
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, "jsonl", rf.Header)
		for sc.Next() {
			if ev := sc.Event(); ev.Kind == source.EventSample {
				w.Write(ev)
			}
		}
		sc.Close()
		w.Close()
		busy.h = rf.Header
		for _, l := range bytes.Split(buf.Bytes(), []byte("\n")) {
			if i := bytes.Index(l, []byte(`"delta":`)); i > 0 {
				busy.deltas = append(busy.deltas, bytes.Clone(l[i+len(`"delta":`):]))
			} else if i := bytes.Index(l, []byte(`"sample":{"seq":`)); i > 0 {
				rest := l[i+len(`"sample":{"seq":`):]
				busy.fulls = append(busy.fulls, bytes.Clone(rest[bytes.IndexByte(rest, ','):]))
			}
		}
	})
	if len(busy.fulls) == 0 || len(busy.deltas) == 0 {
		b.Fatal("no lines from the busy recording")
	}
	return busy.fulls, busy.deltas, busy.h
}

// synthKeep keeps the synthetic recordings, to measure what vkwatch
// replay holds in memory replaying them (README).
var synthKeep = flag.String("synth.keep", "", "BenchmarkReplayOpenAndSeek (BenchmarkReplayGzip): copy the synthetic recordings to DIR/1h0m0s.jsonl.zst and DIR/24h0m0s.jsonl.zst (.gz)")

// withoutTrailer writes a copy of the recording at path with its trailer
// cut out (the end mark kept): a file as written before the trailer, which
// Open indexes by walking its frames.
func withoutTrailer(b *testing.B, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	end, n := len(zstdEndMark()), 0
	if sniff(data) == Gzip {
		end = len(gzipEndMember(0))
		n = int(binary.LittleEndian.Uint32(data[len(data)-end+16:]))
	} else {
		n = 8 + int(binary.LittleEndian.Uint32(data[len(data)-end-8:]))
	}
	out := filepath.Join(b.TempDir(), "walk-"+filepath.Base(path))
	cut := append(bytes.Clone(data[:len(data)-end-n]), data[len(data)-end:]...)
	if err := os.WriteFile(out, cut, 0o644); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkReplayOpenAndSeek: for an hour and a day of six servers at
// 200 ms (.zst): OpenFile (the index), the first frame (open, then read
// the first 2 s of events, what replay shows first), and a seek (read the
// two minutes of history before a point in the middle, as replay feeds
// its charts). None should grow with the length. heap-MB is the most heap
// the Go runtime held (HeapInuse) at the end of the seek's reading.
// open-walk is the open of the same file without its trailer (as written
// before it, or cut short), indexed by walking its frames.
func BenchmarkReplayOpenAndSeek(b *testing.B) { benchReplay(b, Zstd) }

// BenchmarkReplayGzip: BenchmarkReplayOpenAndSeek for the same recordings
// written as .gz.
func BenchmarkReplayGzip(b *testing.B) { benchReplay(b, Gzip) }

func benchReplay(b *testing.B, c Compression) {
	for _, span := range []time.Duration{time.Hour, 24 * time.Hour} {
		path := synthFile(b, span, c)
		if *synthKeep != "" {
			data, err := os.ReadFile(path)
			if err == nil {
				err = os.WriteFile(filepath.Join(*synthKeep, span.String()+".jsonl"+filepath.Ext(path)), data, 0o644)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		fi, _ := os.Stat(path)
		samples := float64(span/(200*time.Millisecond)) * 6
		b.Run("open/"+span.String(), benchOpen(path, fi.Size(), samples))
		b.Run("open-walk/"+span.String(), benchOpen(withoutTrailer(b, path), fi.Size(), samples))
		b.Run("first/"+span.String(), func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				rf, err := OpenFile(path)
				if err != nil {
					b.Fatal(err)
				}
				sc, _ := rf.ScanFrom(rf.Start)
				for sc.Next() && sc.Event().Offset < rf.Start+2*time.Second {
				}
				sc.Close()
				rf.Close()
			}
			reportCPU(b, cpu)
		})
		b.Run("seek/"+span.String(), benchSeek(path, span))
	}
}

// BenchmarkReplayPlain: the open and the seek of BenchmarkReplayOpenAndSeek
// for the same recordings written plain (JSON Lines: 68 MB an hour, 1.65
// GB a day, in a temporary directory), which Open marks at its first line
// and its last MiB, and a seek bisects.
func BenchmarkReplayPlain(b *testing.B) {
	for _, span := range []time.Duration{time.Hour, 24 * time.Hour} {
		path := plainCopy(b, synthFile(b, span, Zstd))
		fi, _ := os.Stat(path)
		samples := float64(span/(200*time.Millisecond)) * 6
		b.Run("open/"+span.String(), benchOpen(path, fi.Size(), samples))
		b.Run("seek/"+span.String(), benchSeek(path, span))
	}
}

// plainCopy writes the recording at path decompressed.
func plainCopy(b *testing.B, path string) string {
	out := filepath.Join(b.TempDir(), "plain.jsonl")
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	readDecompressed(b, path, func(r io.Reader) {
		if _, err := io.Copy(f, r); err != nil {
			b.Fatal(err)
		}
	})
	return out
}

// benchOpen is OpenFile of path (size bytes, samples samples).
func benchOpen(path string, size int64, samples float64) func(b *testing.B) {
	return func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			rf, err := OpenFile(path)
			if err != nil {
				b.Fatal(err)
			}
			rf.Close()
		}
		reportCPU(b, cpu)
		b.ReportMetric(float64(size)/samples, "B/sample")
		b.ReportMetric(samples, "samples")
	}
}

// benchSeek reads the two minutes before the middle of a recording of
// span, as replay feeds its charts.
func benchSeek(path string, span time.Duration) func(b *testing.B) {
	return func(b *testing.B) {
		rf, _ := OpenFile(path)
		defer rf.Close()
		target := span / 2
		var ms runtime.MemStats
		n := 0
		cpu := cpuTime()
		for b.Loop() {
			sc, _ := rf.ScanFrom(target - 2*time.Minute)
			n = 0
			for sc.Next() && sc.Event().Offset < target {
				n++
			}
			sc.Close()
		}
		reportCPU(b, cpu)
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
		b.ReportMetric(float64(n), "events")
	}
}

// cpuTime is the CPU this process has used: on a shared machine a wall
// clock measures the neighbours as much as the code, so the benchmarks
// report CPU time an operation too (cpu-ms/op).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(cpuTime()-since)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

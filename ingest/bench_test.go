package ingest

import (
	"bytes"
	stdjson "encoding/json"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/streamcheck/streamcheck/history"
)

// benchLines returns n realistic native events.
func benchLines(n int) ([][]byte, int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	lines := make([][]byte, n)
	var total int64
	for i := range lines {
		lines[i] = realisticLine(rng, i)
		total += int64(len(lines[i]) + 1)
	}
	return lines, total
}

// cpuTime is the process's user+system CPU time. Benchmarks report it per
// operation (cpu-ns/op) besides wall time: on a shared machine wall time
// counts the time other processes ran, CPU time does not (it does count
// the garbage collector's work on other threads, which decoding causes).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU must be deferred at the start of a benchmark body.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkNativeDecode measures NativeDecoder.Decode per transaction on
// realistic events (b.SetBytes is the mean line length, so MB/s is the
// decoding rate of a native stream).
func BenchmarkNativeDecode(b *testing.B) {
	lines, total := benchLines(4096)
	b.SetBytes(total / int64(len(lines)))
	b.ReportAllocs()
	var d NativeDecoder
	i := 0
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := d.Decode(lines[i%len(lines)], history.Pos{Line: i + 1}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// The alternatives measured before choosing the hand-written scanner
// (doc.go, "Why a hand-written scanner"). They decode the same fields but
// skip most of the validation Decode does, so they flatter the libraries.

type libEvent struct {
	Session stdjson.RawMessage     `json:"session"`
	ID      stdjson.RawMessage     `json:"id"`
	Start   *stdjson.Number        `json:"start"`
	End     *stdjson.Number        `json:"end"`
	Status  string                 `json:"status"`
	Ops     [][]stdjson.RawMessage `json:"ops"`
}

// libToTxn converts a library-decoded event far enough to compare costs:
// scalars become canonical text, lists are split.
func libToTxn(ev *libEvent, unmarshal func([]byte, any) error) history.Txn {
	t := history.Txn{Session: string(ev.Session), ID: string(ev.ID)}
	if ev.Start != nil && ev.End != nil {
		s, _ := ev.Start.Int64()
		e, _ := ev.End.Int64()
		t.Start, t.End, t.HasTime = s, e, true
	}
	t.Status, _ = history.ParseStatus(ev.Status)
	t.Ops = make([]history.Op, len(ev.Ops))
	for i, mop := range ev.Ops {
		op := &t.Ops[i]
		switch string(mop[0]) {
		case `"r"`:
			op.Kind = history.Read
		case `"w"`:
			op.Kind = history.Write
		default:
			op.Kind = history.Append
		}
		op.Key = history.Value(mop[1])
		if len(mop[2]) > 0 && mop[2][0] == '[' {
			var l []stdjson.RawMessage
			_ = unmarshal(mop[2], &l)
			op.IsList = true
			for _, v := range l {
				op.List = append(op.List, history.Value(v))
			}
		} else {
			op.Value = history.Value(mop[2])
		}
	}
	return t
}

func BenchmarkNativeDecodeGoccyTyped(b *testing.B) {
	lines, total := benchLines(4096)
	b.SetBytes(total / int64(len(lines)))
	b.ReportAllocs()
	i := 0
	defer reportCPU(b)()
	for b.Loop() {
		var ev libEvent
		dec := gojson.NewDecoder(bytes.NewReader(lines[i%len(lines)]))
		dec.UseNumber()
		if err := dec.Decode(&ev); err != nil {
			b.Fatal(err)
		}
		_ = libToTxn(&ev, gojson.Unmarshal)
		i++
	}
}

func BenchmarkNativeDecodeStdlibTyped(b *testing.B) {
	lines, total := benchLines(4096)
	b.SetBytes(total / int64(len(lines)))
	b.ReportAllocs()
	i := 0
	defer reportCPU(b)()
	for b.Loop() {
		var ev libEvent
		dec := stdjson.NewDecoder(bytes.NewReader(lines[i%len(lines)]))
		dec.UseNumber()
		if err := dec.Decode(&ev); err != nil {
			b.Fatal(err)
		}
		_ = libToTxn(&ev, stdjson.Unmarshal)
		i++
	}
}

func BenchmarkAppendNative(b *testing.B) {
	lines, total := benchLines(4096)
	txns := make([]history.Txn, len(lines))
	var d NativeDecoder
	for i, l := range lines {
		txns[i], _ = d.Decode(l, history.Pos{Line: i + 1})
	}
	b.SetBytes(total / int64(len(lines)))
	b.ReportAllocs()
	var buf []byte
	i := 0
	for b.Loop() {
		buf = AppendNative(buf[:0], &txns[i%len(txns)])
		i++
	}
}

// benchHistory returns n realistic transactions as Elle operations
// (invocation, then completion, processes interleaved two at a time).
func benchHistory(n int) ([]genOp, []history.Txn) {
	lines, _ := benchLines(n)
	var d NativeDecoder
	var ops []genOp
	var txns []history.Txn
	for i, l := range lines {
		t, err := d.Decode(l, history.Pos{Line: i + 1})
		if err != nil {
			panic(err)
		}
		txns = append(txns, t)
		var inv, done []genMop
		for _, op := range t.Ops {
			m := genMop{f: op.Kind.String(), key: op.Key, value: op.Value, list: op.List, isLst: op.IsList}
			done = append(done, m)
			if op.Kind == history.Read {
				m.value, m.list, m.isLst = history.Null, nil, false
			}
			inv = append(inv, m)
		}
		p := strconv.Itoa(i % 16)
		ops = append(ops,
			genOp{typ: "invoke", process: p, f: "txn", time: t.Start, index: 2 * i, mops: inv},
			genOp{typ: "ok", process: p, f: "txn", time: t.End, index: 2*i + 1, mops: done})
	}
	return ops, txns
}

// BenchmarkReadHistory reads a 2000-transaction history in each format;
// txn/s is the figure to compare (Elle formats carry two operations per
// transaction).
func BenchmarkReadHistory(b *testing.B) {
	const n = 2000
	ops, txns := benchHistory(n)
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"native", writeNative(txns)},
		{"elle-json", writeJSON(ops, true)},
		{"elle-edn", writeEDN(ops, false)},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.data)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				h, _, err := ReadHistory(bytes.NewReader(f.data), f.name)
				if err != nil || len(h.Txns) != n {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "txn/s")
		})
	}
}

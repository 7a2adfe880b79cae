package ingest

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// stampedLines is gen's history of n transactions (the preset workload) as
// `streamcheck gen --stamps` writes it: commit_ts and start_ts on every
// committed transaction, one line each.
func stampedLines(b *testing.B, preset string, n int) [][]byte {
	cfg, err := gen.Preset(preset)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Txns, cfg.Seed, cfg.UnknownRatio = n, 1, 0
	h, _, err := gen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	lines := make([][]byte, len(h.Txns))
	for i := range h.Txns {
		var f *history.Facts
		if h.Txns[i].Status == history.Committed {
			f = &history.Facts{CommitTS: int64(i + 1), StartTS: int64(i + 1), Has: history.HasCommitTS | history.HasStartTS}
		}
		lines[i] = append(AppendNativeFacts(nil, &h.Txns[i], f), '\n')
	}
	return lines
}

// BenchmarkNativeDecodeModes: a native line of gen's stamped histories
// decoded by the fast path (fast) or by the general decoder alone
// (slow, the decoder before issue 29's fast path), in Decode's mode (run,
// Kafka), the batch reader's (ReadHistory) and ScanNative's scratch mode
// (check's compact paths); cpu-ns/op is per line.
func BenchmarkNativeDecodeModes(b *testing.B) {
	for _, wl := range []string{"mixed", "blindw-rw"} {
		lines := stampedLines(b, wl, 20000)
		total := 0
		for _, l := range lines {
			total += len(l)
		}
		for _, mode := range []string{"plain", "batch", "scratch"} {
			for _, slow := range []bool{false, true} {
				name := wl + "/" + mode + "/fast"
				if slow {
					name = wl + "/" + mode + "/slow"
				}
				b.Run(name, func(b *testing.B) {
					b.SetBytes(int64(total / len(lines)))
					b.ReportAllocs()
					var d NativeDecoder
					i := 0
					defer reportCPU(b)()
					for b.Loop() {
						if i%len(lines) == 0 {
							// A fresh decoder per pass: the batch slab and
							// the scratch tables grow with the history.
							d = NativeDecoder{batch: mode == "batch", scratch: mode == "scratch", slow: slow}
						}
						if _, derr := d.decode(lines[i%len(lines)], history.Pos{Line: i + 1}); derr != nil {
							b.Fatal(derr.err)
						}
						i++
					}
				})
			}
		}
	}
}

package runcmd

import (
	"context"
	"io"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// BenchmarkInProcessFeed compares the canary's two ways into run on one
// generated stream (in end order, as a recorder emits): "json-pipe" is
// the old one (each transaction encoded as a native JSON line into an
// io.Pipe, read and decoded by Main on stdin), "txns" the new one
// (MainTxns, decoded transactions over a channel). Both check the same
// stream to the end with the same flags.
//
//	go test -run '^$' -bench InProcessFeed -benchmem -count 5 ./internal/runcmd/
func BenchmarkInProcessFeed(b *testing.B) {
	cfg, _ := gen.Preset("blindw-rw")
	cfg.Seed, cfg.Txns, cfg.Keys, cfg.Sessions, cfg.Concurrency = 7, 20000, 2000, 8, 6
	h, _, err := gen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"--http=", "--status", "0", "--initial-state", "empty", "--lateness", "1s", "--tick", "10ms"}
	b.Run("json-pipe", func(b *testing.B) {
		for b.Loop() {
			pr, pw := io.Pipe()
			go func() {
				var buf []byte
				for i := range h.Txns {
					buf = append(ingest.AppendNative(buf[:0], &h.Txns[i]), '\n')
					if _, err := pw.Write(buf); err != nil {
						return
					}
				}
				pw.Close()
			}()
			if code := Main(context.Background(), args, pr, io.Discard, io.Discard); code == ExitError {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(h.Txns)), "ns/txn")
	})
	b.Run("txns", func(b *testing.B) {
		for b.Loop() {
			ch := make(chan history.Txn, 1024)
			go func() {
				for _, t := range h.Txns {
					ch <- t
				}
				close(ch)
			}()
			if code := MainTxns(context.Background(), args, ch, io.Discard, io.Discard); code == ExitError {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(h.Txns)), "ns/txn")
	})
}

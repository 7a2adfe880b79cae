package checkcmd

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestTimeCompactPathReport runs check on the same histories with client
// times and no database facts as a file (the compact path first: the
// witness from client time on incremental.TimeCompact, stamps.go) and on
// standard input (the full path only), at each serializable level and in
// both output formats: the exit status and the report are byte for byte
// the same, the witness file too. The histories: generated (most
// witnessed), with unknown outcomes and repeated values, with injected
// anomalies (the full path decides), with reads changed, with lists (the
// form refuses), with database facts (the form refuses: the facts' path
// reports on them), and with input errors the form must refuse (a
// duplicate id; an end before its start and a transaction without times,
// each on an aborted transaction, which the witness itself leaves out).
func TestTimeCompactPathReport(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(27, 19))
	var viaCompact, checks int
	n := 16
	if testing.Short() {
		n = 8
	}
	for i := range n {
		cfg := gen.Config{Txns: 40 + rng.IntN(80), Keys: 5 + rng.IntN(30), Seed: uint64(i + 1), Sessions: 4, OpsPerTxn: 1 + rng.IntN(4),
			AbortRatio: 0.05, UnknownRatio: 0.03 * float64(i%2), DupValueRatio: 0.1 * float64(i%3), Concurrency: 3}
		switch i % 8 {
		case 1:
			cfg.InjectRate = 0.05
		case 5:
			cfg.ListRatio = 0.3
		}
		h, _, err := gen.Generate(cfg)
		if i%8 == 4 {
			// Database facts with one commit stamp dropped: the stamps'
			// form refuses, and the form of client time must too (the
			// facts' path reports on the stamps).
			h, _, err = gen.GenerateStamps(cfg)
			if err == nil {
				for j := range h.Facts {
					if h.Facts[j].Has&history.HasCommitTS != 0 {
						h.Facts[j].Has &^= history.HasCommitTS
						break
					}
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		switch i % 8 {
		case 2, 6:
			// A read changed: an anomaly, or a history the witness fails on.
			for j := range h.Txns {
				if h.Txns[j].Status == history.Committed && rng.IntN(3) == 0 {
					for n := range h.Txns[j].Ops {
						if h.Txns[j].Ops[n].Kind == history.Read && !h.Txns[j].Ops[n].IsList {
							h.Txns[j].Ops[n].Value = history.Value(fmt.Sprint(rng.IntN(2)))
							break
						}
					}
					break
				}
			}
		case 3:
			h.Txns[len(h.Txns)-1].ID = h.Txns[rng.IntN(len(h.Txns)-1)].ID
		case 7:
			// Input errors on a transaction the witness leaves out (an
			// aborted one): the form itself must refuse them.
			j := rng.IntN(len(h.Txns))
			h.Txns[j].Status = history.Aborted
			if i/8%2 == 0 {
				h.Txns[j].End = h.Txns[j].Start - 1
			} else {
				h.Txns[j].HasTime, h.Txns[j].Start, h.Txns[j].End = false, 0, 0
			}
		}
		text := ingest.AppendNativeHistory(nil, h)
		file := filepath.Join(dir, fmt.Sprintf("h%d.jsonl", i))
		if err := os.WriteFile(file, text, 0o644); err != nil {
			t.Fatal(err)
		}
		hits, n := fileAgainstStdin(t, i, file, text, dir, "by the witness from client time")
		viaCompact, checks = viaCompact+hits, checks+n
	}
	if viaCompact == 0 {
		t.Fatal("no history took the compact path of client time")
	}
	t.Logf("%d of %d checks answered by the witness from client time on the compact form", viaCompact, checks)
}

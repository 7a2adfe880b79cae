package stampcheck

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestStreamAgreesWithChains holds the one-pass path (stream) to the
// per-key chains it stands in for: on random tiny histories with commit
// and snapshot stamps, some with a stamp falsified, stream passes exactly
// when first committer wins holds along every chain and every read is
// what the chains give (reads with scanAll off). A stream that passed
// what the chains fail would make a contradicted history valid by its
// facts; one that failed what they pass would only cost time, and is
// caught here too.
func TestStreamAgreesWithChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	cfg := oracle.DefaultTinyConfig()
	n := 3000
	if testing.Short() {
		n = 500
	}
	var pass, fail int
	for i := 0; i < n; i++ {
		h := oracle.RandomTinyStamps(rng, cfg, oracle.CommitStart, 0.5)
		if rng.IntN(2) == 0 {
			// Coarser stamps: ties between one transaction's start and
			// another's commit, and between two commits, become common.
			for j := range h.Facts {
				f := &h.Facts[j]
				f.CommitTS /= 4
				f.StartTS = min(f.StartTS/4, f.CommitTS)
				if f.Has&history.HasCommitTS == 0 {
					f.CommitTS = 0
				}
			}
		}
		opts := history.DefaultOptions()
		if rng.IntN(4) == 0 {
			opts.InitialState = history.InitialUnknown
		}
		var committed []int32
		full := true
		for j := range h.Txns {
			if h.Txns[j].Status != history.Committed {
				continue
			}
			committed = append(committed, int32(j))
			full = full && h.Facts[j].Has&(history.HasCommitTS|history.HasStartTS) == history.HasCommitTS|history.HasStartTS
		}
		if !full {
			continue
		}
		a := &analysis{mode: stamps, kx: numberKeys(h)}
		a.name, a.list = a.kx.name, a.kx.list
		a.byCommit, a.byStart = stampOrders(h, opts, committed)
		got := a.stream(h, opts)
		nk := len(a.name)
		a.chain = make([][]int32, nk)
		a.cts, a.final = make([][]int64, nk), make([][]history.Value, nk)
		a.apps, a.cum = make([][]history.Value, nk), make([][]int32, nk)
		want := a.stampChains(h) == nil && a.reads(h, opts, a.byStart, false) == nil
		if got != want {
			t.Fatalf("stream %v, chains %v (initial %v)\n%s", got, want, opts.InitialState, dumpTiny(h))
		}
		if got {
			pass++
		} else {
			fail++
		}
	}
	t.Logf("%d pass, %d fail", pass, fail)
	if pass == 0 || fail == 0 {
		t.Errorf("the mix misses a side: %d pass, %d fail", pass, fail)
	}
}

func dumpTiny(h *history.History) string {
	var s string
	for i := range h.Txns {
		s += h.Txns[i].ID + " " + h.Txns[i].Status.String()
		for _, op := range h.Txns[i].Ops {
			s += " " + op.String()
		}
		f := h.Facts[i]
		s += " c=" + strconv.FormatInt(f.CommitTS, 10) + " s=" + strconv.FormatInt(f.StartTS, 10) + "\n"
	}
	return s
}

package stampcheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// compactCases is how many random histories TestCompactAgainstFull draws
// per level and source: STREAMCHECK_COMPACT_N overrides it, e.g.
//
//	STREAMCHECK_COMPACT_N=20000 go test ./stampcheck -run CompactAgainstFull
func compactCases(t *testing.T) int {
	if s := os.Getenv("STREAMCHECK_COMPACT_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("STREAMCHECK_COMPACT_N: %v", err)
		}
		return n
	}
	if testing.Short() {
		return 150
	}
	return 600
}

// viaScan is check's compact path on native bytes: ingest.ScanNative with
// the decoder's ids into Compact.AddIDs, then Compact.CheckSerial.
func viaScan(text []byte, opts history.Options) (*incremental.Result, string) {
	c := stampcheck.NewCompact(0)
	require(c, opts)
	err := ingest.ScanNative(bytes.NewReader(text), "t", func(e *ingest.Event) error {
		c.AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
		return nil
	})
	if err != nil {
		return nil, err.Error()
	}
	return compactCheck(c, opts)
}

// viaAhead is viaScan with the Compact fed through an Ahead of batches
// of batch transactions, as check's compact path feeds it, stopping the
// scan once it is refused.
func viaAhead(text []byte, opts history.Options, batch int) (*incremental.Result, string) {
	c := stampcheck.NewCompact(0)
	require(c, opts)
	a := stampcheck.AheadSized(c, batch)
	stop := errors.New("refused")
	err := ingest.ScanNative(bytes.NewReader(text), "t", func(e *ingest.Event) error {
		a.Add(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
		if a.Refused() {
			return stop
		}
		return nil
	})
	a.Close()
	if err != nil && err != stop {
		return nil, err.Error()
	}
	return compactCheck(c, opts)
}

// require is check's Require for the level.
func require(c *stampcheck.Compact, opts history.Options) {
	if opts.Level.BeginCommit() {
		c.Require(history.HasCommitTS | history.HasStartTS)
	} else {
		c.Require(history.HasCommitTS)
	}
}

// compactCheck is check's split: the snapshot family's witness at its
// levels, the serial one at the others.
func compactCheck(c *stampcheck.Compact, opts history.Options) (*incremental.Result, string) {
	if opts.Level.BeginCommit() {
		return c.CheckSnapshot(opts, stampcheck.RulesFor(opts.Level))
	}
	return c.CheckSerial(opts)
}

// viaAdd is the compact path from a history in memory (Compact.Add's own
// numbering).
func viaAdd(h *history.History, opts history.Options) (*incremental.Result, string) {
	c := stampcheck.NewCompact(len(h.Txns))
	if rand.IntN(2) == 0 { // with and without the early refusal
		require(c, opts)
	}
	for i := range h.Txns {
		c.Add(&h.Txns[i], h.FactsOf(i))
	}
	return compactCheck(c, opts)
}

// TestCompactAgainstFull holds the compact path (check's, for a stamped
// native file at a serializable level) to the full one on random stamped
// histories, at each serializable level: the history is written as native
// lines; the full path reads it whole (ingest.ReadHistory, which
// validates) and runs CheckSerial, which is what Check's verdict by the
// facts' witness rests on. The compact path must give a result exactly
// when the full path reads the history without error, would not refuse
// it for missing client times, and CheckSerial witnesses it; and then the
// same witness order, transaction for transaction. So the compact path
// neither says valid where the full path does not (exactness) nor falls
// back where the stamps decide (the speed it exists for).
//
// Sources: tiny histories of the oracle's generator with commit stamps
// (contradicted by the reads half the time, ties from coarsened stamps,
// unknown and aborted transactions, list keys, an unknown initial state)
// and generated histories of a few hundred transactions with mutations:
// a stamp dropped, two stamps tied, a read changed, a committed
// transaction made unknown, a duplicate id, a key made both a list and a
// register (input errors, which the compact path must leave to the full
// one).
func TestCompactAgainstFull(t *testing.T) {
	n := compactCases(t)
	levels := append([]history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable}, snapshotLevels...)
	for _, lv := range levels {
		t.Run(lv.String(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(lv)+31, 77))
			var witnessed, fellBack, inputErr int
			for i := 0; i < n; i++ {
				h := compactCase(t, rng, i)
				opts := tinyOpts(rng, lv)
				text := ingest.AppendNativeHistory(nil, h)
				wantOK, want := fullWitness(text, opts)
				scanRes, scanWhy := viaScan(text, opts)
				batch := 1 + rng.IntN(4)
				for _, path := range []struct {
					name string
					run  func() (*incremental.Result, string)
				}{
					{"scan", func() (*incremental.Result, string) { return scanRes, scanWhy }},
					{"add", func() (*incremental.Result, string) { return viaAdd(h, opts) }},
					{"ahead", func() (*incremental.Result, string) { return viaAhead(text, opts, batch) }},
				} {
					got, why := path.run()
					if path.name == "ahead" && (why != scanWhy || !reflect.DeepEqual(got, scanRes)) {
						// The Compact fed through Ahead ends as the one
						// fed directly: the same refusal, the same result.
						t.Fatalf("ahead (batches of %d): %v %q, direct %v %q\n%s", batch, got, why, scanRes, scanWhy, text)
					}
					switch {
					case (got != nil) != (want != nil):
						t.Fatalf("%s: compact %v (%s), full witness %v; opts %+v\n%s", path.name, got != nil, why, want, opts, text)
					case got != nil && !slices.Equal(got.Witness, want):
						t.Fatalf("%s: compact witness %v, full %v\n%s", path.name, got.Witness, want, text)
					case got != nil && (got.Verdict != incremental.Valid || got.Stats.Txns != countLines(text)):
						t.Fatalf("%s: compact result %v with %d txns\n%s", path.name, got.Verdict, got.Stats.Txns, text)
					}
				}
				switch {
				case want != nil:
					witnessed++
				case wantOK:
					fellBack++
				default:
					inputErr++
				}
			}
			t.Logf("%d histories: %d witnessed on both paths, %d left to the full path, %d input errors", n, witnessed, fellBack, inputErr)
			if n >= 100 && (witnessed == 0 || fellBack == 0 || inputErr == 0) {
				t.Fatalf("a class is empty: %d witnessed, %d fell back, %d input errors", witnessed, fellBack, inputErr)
			}
		})
	}
}

// countLines counts the transactions (lines) of a native text.
// compactCase is case i of the compact tests' sources: every fourth a
// mutated generated history, the others the oracle's tiny stamped ones
// (commit stamps only or both), coarsened half the time, with input
// errors.
func compactCase(t *testing.T, rng *rand.Rand, i int) *history.History {
	t.Helper()
	if i%4 == 3 {
		return mutatedGen(t, rng)
	}
	kind := oracle.CommitOnly
	if rng.IntN(2) == 0 {
		kind = oracle.CommitStart
	}
	h := oracle.RandomTinyStamps(rng, oracle.DefaultTinyConfig(), kind, 0.5)
	if rng.IntN(2) == 0 {
		coarsen(h)
	}
	tinyInputErrors(rng, h)
	return h
}

func countLines(text []byte) int { return bytes.Count(text, []byte{'\n'}) }

// fullWitness is the full path's answer: ok is false on an input error
// (the read, or check's refusal of a real-time level without client
// times); want is the witness when CheckSerial gives one.
func fullWitness(text []byte, opts history.Options) (ok bool, want []string) {
	h, _, err := ingest.ReadHistory(bytes.NewReader(text), "t")
	if err != nil {
		return false, nil
	}
	if opts.Level.RealTime() {
		for i := range h.Txns {
			if !h.Txns[i].HasTime {
				return false, nil
			}
		}
	}
	if !h.HasFacts() {
		return true, nil
	}
	if opts.Level.BeginCommit() {
		fast := stampcheck.CheckSnapshot(h, opts, stampcheck.RulesFor(opts.Level))
		if fast.Outcome != stampcheck.Witnessed {
			return true, nil
		}
		want = []string{} // witnessed, with no event when nothing committed
		for _, e := range fast.Events {
			if e.Commit {
				want = append(want, "commit "+h.Txns[e.Txn].ID)
			} else {
				want = append(want, "begin "+h.Txns[e.Txn].ID)
			}
		}
		return true, want
	}
	fast := stampcheck.CheckSerial(h, opts)
	if fast.Outcome != stampcheck.Witnessed {
		return true, nil
	}
	want = make([]string, len(fast.Order))
	for p, i := range fast.Order {
		want[p] = h.Txns[i].ID
	}
	return true, want
}

// tinyInputErrors makes one in twelve histories an input error.
func tinyInputErrors(rng *rand.Rand, h *history.History) {
	if len(h.Txns) < 2 || rng.IntN(12) != 0 {
		return
	}
	if rng.IntN(2) == 0 {
		h.Txns[1].ID = h.Txns[0].ID
		return
	}
	breakKind(rng, h)
}

// breakKind makes a key both a list and a register: a write on a list
// key, or an append on a register key.
func breakKind(rng *rand.Rand, h *history.History) {
	lists := h.ListKeys()
	i := rng.IntN(len(h.Txns))
	for _, op := range h.Txns[rng.IntN(len(h.Txns))].Ops {
		kind := history.Append
		if lists[op.Key] {
			kind = history.Write
		}
		h.Txns[i].Ops = append(slices.Clip(h.Txns[i].Ops), history.Op{Kind: kind, Key: op.Key, Value: "99"})
		return
	}
}

// mutatedGen is a generated stamped history of 100 to 400 transactions
// (mixed workload: registers, lists, aborts, unknowns) with up to three
// mutations.
func mutatedGen(t *testing.T, rng *rand.Rand) *history.History {
	cfg := gen.Config{Txns: 100 + rng.IntN(300), Keys: 20 + rng.IntN(60), Seed: rng.Uint64(), Sessions: 4 + rng.IntN(8), UnknownRatio: 0.02, AbortRatio: 0.05, ListRatio: 0.2}
	h, _, err := gen.GenerateStamps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range rng.IntN(4) {
		i := rng.IntN(len(h.Txns))
		tx, f := &h.Txns[i], &h.Facts[i]
		switch rng.IntN(6) {
		case 0: // a stamp dropped
			f.Has &^= history.HasCommitTS
		case 1: // two stamps tied
			j := rng.IntN(len(h.Txns))
			if tx.Status == history.Committed && h.Txns[j].Status == history.Committed && h.Facts[j].Has&history.HasCommitTS != 0 {
				f.CommitTS, f.Has = h.Facts[j].CommitTS, f.Has|history.HasCommitTS
				f.StartTS = min(f.StartTS, f.CommitTS)
			}
		case 2: // a read changed
			for n := range tx.Ops {
				if op := &tx.Ops[n]; op.Kind == history.Read && !op.IsList {
					tx.Ops = slices.Clone(tx.Ops)
					tx.Ops[n].Value = history.Value(fmt.Sprint(rng.IntN(3)))
					break
				}
			}
		case 3: // committed made unknown: its commit is not known
			if tx.Status == history.Committed {
				tx.Status = history.Unknown
				f.Has &^= history.HasCommitTS
			}
		case 4:
			h.Txns[rng.IntN(len(h.Txns))].ID = tx.ID
		case 5:
			breakKind(rng, h)
		}
	}
	return h
}

package sionline

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/online"
)

// culpritPerPrefix is the reference sealedPrefixes is held to: the
// culprit check the engine ran for one prefix at a time before it judged
// every prefix in one pass (docs/SEMANTICS.md §5 "One witness, several
// evictions"). It returns the earliest member to cut before, -1 when the
// first limit members are sealed in the witness.
func culpritPerPrefix(witness []string, index map[string]int, limit int, byName map[string]*history.Txn) int {
	inX := func(name string) bool {
		if name == ghostName {
			return true
		}
		n, ok := index[name]
		return ok && n < limit
	}
	lastWriter := map[history.Key]string{}
	yBegun := map[history.Key]bool{}
	yWrote := map[history.Key]bool{} // a writer outside X committed the key so far
	c := -1
	blame := func(name string) {
		if n := index[name]; c < 0 || n < c {
			c = n
		}
	}
	for _, ev := range witness {
		sp := strings.IndexByte(ev, ' ')
		name := ev[sp+1:]
		t := byName[name]
		if t == nil {
			continue
		}
		x := inX(name)
		if ev[:sp] == "begin" {
			seen := map[history.Key]bool{}
			other := map[history.Key]bool{} // an op on the key other than an append so far
			for _, op := range t.Ops {
				// A first read, or a list read after the transaction's
				// own appends alone (§5 "A list read after its own
				// appends reads the snapshot too (si32)").
				if op.Kind == history.Read && (!seen[op.Key] || op.IsList && !other[op.Key]) {
					if x {
						if w, ok := lastWriter[op.Key]; ok && !inX(w) && name != ghostName {
							blame(name)
						}
					} else {
						yBegun[op.Key] = true
						// A reader outside X of X's version after a
						// writer outside X (§5 "A version order the
						// chunks keep (si32)").
						if w, ok := lastWriter[op.Key]; ok && inX(w) && yWrote[op.Key] && !NoWriterOrder {
							blame(w)
						}
					}
				}
				seen[op.Key] = true
				other[op.Key] = other[op.Key] || op.Kind != history.Append
			}
			continue
		}
		for _, op := range t.Ops {
			if op.Kind == history.Read {
				continue
			}
			lastWriter[op.Key] = name
			if !x {
				yWrote[op.Key] = true
			}
			if x && yBegun[op.Key] && name != ghostName {
				blame(name)
			}
		}
	}
	return c
}

// TestSealedPrefixesMatchPerPrefix: on witnesses of generated valid
// streams at strong SI (overlapping read-modify-writes, blind writes,
// lists, unknown outcomes), sealedPrefixes judges every prefix as the
// per-prefix culprit check does, with some transactions left out of the
// members (as quarantined or dead-lettered ones are).
func TestSealedPrefixesMatchPerPrefix(t *testing.T) {
	ctx := context.Background()
	checked, unsealed := 0, 0
	for i := range 12 {
		rng := rand.New(rand.NewPCG(uint64(i), 77))
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(i + 100)
		cfg.Txns = 40 + rng.IntN(80)
		cfg.Keys = 6 + rng.IntN(20)
		cfg.Concurrency = 6
		cfg.ListRatio = []float64{0, 0.3}[i%2]
		cfg.UnknownRatio = []float64{0, 0.1}[(i/2)%2]
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		res, err := incremental.Check(ctx, h, opts, incremental.Config{MaxAnomalies: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != incremental.Valid {
			continue
		}
		order := make([]int, len(h.Txns))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start) })
		index := map[string]int{}
		byName := map[string]*history.Txn{}
		for j := range h.Txns {
			byName[h.Txns[j].ID] = &h.Txns[j]
		}
		for _, j := range order {
			if rng.IntN(10) > 0 {
				index[h.Txns[j].ID] = len(index)
			}
		}
		n := len(index)
		sealed := sealedPrefixes(res.Witness, index, n, byName)
		for p := 0; p <= n; p++ {
			want := culpritPerPrefix(res.Witness, index, p, byName) < 0
			if sealed[p] != want {
				t.Fatalf("stream %d, prefix %d of %d: sealedPrefixes says %v, the per-prefix check %v", i, p, n, sealed[p], want)
			}
			checked++
			if !want {
				unsealed++
			}
		}
	}
	if checked == 0 || unsealed == 0 || unsealed == checked {
		t.Fatalf("%d prefixes judged, %d not sealed: the streams do not exercise both answers", checked, unsealed)
	}
	t.Logf("%d prefixes, %d not sealed", checked, unsealed)
}

// archived decodes every transaction the archive holds, without taking
// it out (a test's view of the body file).
func archived(t *testing.T, a *archive) []tx {
	t.Helper()
	a.flush()
	var out []tx
	at := map[uint64]int{}
	for _, s := range a.segs {
		for r := 0; r+1 < len(s.Ranges); r += 2 {
			rd := bufio.NewReader(io.NewSectionReader(a.file, s.Ranges[r], s.Ranges[r+1]-s.Ranges[r]))
			var err error
			if out, _, err = decodeRecords(rd, out, at, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestChunkGhostsKeepEveryKey: after evictions in chunks of a few
// transactions, resets among them (WaitWindow 0: every witness choice
// taken, so later reads contradict some), the ghost holds a version of
// every key a committed archived transaction wrote, and, under an unknown
// initial state, a version or pin of every key one read first. A chunk's
// ghost that drops what the ghost before it held (replaying only the
// witness's events, which a ghost-less screen after a reset does not
// have) loses keys, and with them the constraint a later read of the key
// must meet.
func TestChunkGhostsKeepEveryKey(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 2
	chunked, resets := 0, 0
	for i := range 6 {
		rng := rand.New(rand.NewPCG(uint64(i), 2929))
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 200 + rng.IntN(150)
		cfg.Keys = 20 + rng.IntN(40)
		cfg.Sessions = 8
		cfg.Concurrency = 5
		cfg.ListRatio = []float64{0, 0.3}[i%2]
		cfg.UnknownRatio = 0.1
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		if i%3 == 2 {
			opts.InitialState = history.InitialUnknown
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, eng := live(t, h, opts, rng, 100_000+rng.Int64N(2_000_000), 1+rng.IntN(4), -1)
			resets += eng.resets
			if len(eng.arch.segs) > 1 {
				chunked++
			}
			g := eng.ghost
			for _, x := range archived(t, &eng.arch) {
				if x.T.Status != history.Committed || x.Fl&(fQuarantined|fUnchecked) != 0 {
					continue
				}
				own := map[history.Key]bool{}
				for _, op := range x.T.Ops {
					_, reg := g.Reg[op.Key]
					_, list := g.List[op.Key]
					_, pin := g.Pin[op.Key]
					switch {
					case op.Kind != history.Read:
						own[op.Key] = true
						if !reg && !list {
							t.Fatalf("%s wrote %s and was archived; the ghost has no version of it", x.Name, op.Key)
						}
					case !own[op.Key] && opts.InitialState == history.InitialUnknown && !reg && !list && !pin:
						t.Fatalf("%s read %s first and was archived; the ghost neither writes nor pins it", x.Name, op.Key)
					}
				}
			}
		})
	}
	if chunked == 0 || resets == 0 {
		t.Fatalf("%d streams ended with several segments, %d resets: the test does not exercise chunks after a reset", chunked, resets)
	}
}

// TestInDoubtChoiceContradicted is issue 28's witness contradiction,
// small (docs/SEMANTICS.md §5 "A witness choice the stream contradicts"):
// u's outcome is unknown and it writes x1 and nothing reads x for a
// long time; the screen's witness may leave u uncommitted, and u leaves
// with the ghost saying x0. Then v reads x1: the screen fails (v's read
// has no source there), while A_t is valid (u committed). That is no
// anomaly: no alert fires, and the step recovers by re-admitting the
// segment u left in, not the whole archive, although u left in one
// eviction with everything before it: that eviction went in chunks.
func TestInDoubtChoiceContradicted(t *testing.T) {
	// The contradiction this test needs is what companions avoid
	// (TestInDoubtWriterLeavesAsCompanion): without them, it tests the
	// re-admission that still serves the choices companions do not cover.
	defer func(c bool) { NoCompanions = c }(NoCompanions)
	NoCompanions = true
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	h, opts := contradictedHistory(t, 10)
	// Ticks at 2000 and 4000: the first step evicts all but v and the
	// g's at once, u among its newest members; the second has v.
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(28, 28)), 2000, 1, -1)
	if len(fired) > 0 {
		t.Fatalf("false alarm: %v", fired[0].Core)
	}
	if eng.resets > 0 {
		t.Fatalf("%d full resets (%d suffixes re-admitted): the contradicted choice should cost its segments, not the archive", eng.resets, eng.readmits)
	}
	if eng.readmits == 0 {
		t.Fatal("no screen failed: the witness did not leave u out, the history does not exercise the contradiction")
	}
}

// guardFile is a durable body file in memory that refuses to read a
// byte Punch freed.
type guardFile struct{ *online.MemBodyFile }

func (g guardFile) ReadAt(p []byte, off int64) (int, error) {
	if off < g.Punched() {
		return 0, fmt.Errorf("read at %d, below the %d bytes punched", off, g.Punched())
	}
	return g.MemBodyFile.ReadAt(p, off)
}

// TestPunchFreesWhatAResetTookBack (docs/SEMANTICS.md §5 "Trimming the
// archive's body file"): in a checkpointed run a full reset leaves the
// archive's old records dead in the durable body file; Punch frees them,
// and neither the engine nor one restored from the checkpoint reads a
// freed byte, down to a full reset of the whole archive. Freeing up to
// the file's end instead fails here.
func TestPunchFreesWhatAResetTookBack(t *testing.T) {
	// The contradiction this test needs is what companions avoid
	// (TestInDoubtWriterLeavesAsCompanion): without them, it tests the
	// re-admission that still serves the choices companions do not cover.
	defer func(c bool) { NoCompanions = c }(NoCompanions)
	NoCompanions = true
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	u := txn("u", "a", 100, 110, r("x", "0"), w("x", "1"))
	u.Status = history.Unknown
	txns := []history.Txn{txn("i", "a", 0, 10, w("x", "0")), u}
	for s := int64(200); s < 2000; s += 10 {
		txns = append(txns, txn(fmt.Sprint("f", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, txn("v", "c", 2100, 2101, r("x", "1")))
	for s := int64(2200); s < 3000; s += 10 {
		txns = append(txns, txn(fmt.Sprint("g", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 1000}
	file := guardFile{online.NewMemBodyFile(true)}
	e, err := New(opts, Config{Stream: "s", Bodies: file})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var punched []int64
	for k, x := range txns {
		e.Release(x)
		var ids []string
		for _, y := range txns[:k] {
			if y.End+opts.InDoubt < x.Start || (y.Status == history.Committed && y.End < x.Start) {
				ids = append(ids, y.ID)
			}
		}
		e.Close(ids...)
		if _, err := e.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if k%25 == 0 {
			// A checkpoint, then what it frees once durable.
			if _, sync, err := e.SnapshotDurable(); err != nil || sync() != nil {
				t.Fatal(err)
			}
			if err := e.Punch()(); err != nil {
				t.Fatal(err)
			}
			punched = append(punched, file.Punched())
		}
	}
	if len(e.Alerts()) > 0 {
		t.Fatalf("false alarm: %v", e.Alerts()[0].Core)
	}
	if e.resets == 0 {
		t.Fatal("no full reset: the history does not exercise the trim")
	}
	snap, sync, err := e.SnapshotDurable()
	if err != nil || sync() != nil {
		t.Fatal(err)
	}
	if err := e.Punch()(); err != nil {
		t.Fatal(err)
	}
	if file.Punched() == 0 {
		t.Fatalf("nothing punched (%v along the way)", punched)
	}
	r, err := Restore(opts, Config{Stream: "s", Bodies: file}, snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, eng := range []*Engine{e, r} {
		n := eng.arch.txns()
		if err := eng.reset(); err != nil {
			t.Fatal(err)
		}
		if n == 0 || eng.arch.txns() != 0 {
			t.Fatalf("a reset of %d archived left %d", n, eng.arch.txns())
		}
	}
	t.Logf("punched %d of %d bytes (%v along the way)", file.Punched(), len(file.Bytes()), punched)
}

// TestScreenVerdictOnly: a screen is checked for its verdict only
// (screenCheck): the same verdict as the full check, with no core
// searched for when it is invalid.
func TestScreenVerdictOnly(t *testing.T) {
	ctx := context.Background()
	invalid := 0
	for i := range 6 {
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(i + 1)
		cfg.Txns, cfg.Keys = 60, 12
		if i%2 == 1 {
			cfg.Inject = []string{history.LostUpdate}
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty}
		full, err := incremental.Check(ctx, h, opts, incremental.Config{MaxAnomalies: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := incremental.Check(ctx, h, opts, screenCheck)
		if err != nil {
			t.Fatal(err)
		}
		if got.Verdict != full.Verdict {
			t.Fatalf("stream %d: screen check %s, full check %s", i, got.Verdict, full.Verdict)
		}
		if got.Verdict == incremental.Invalid {
			invalid++
			if len(got.Anomalies) > 0 {
				t.Fatalf("stream %d: the screen check searched for %d cores", i, len(got.Anomalies))
			}
		}
	}
	if invalid == 0 {
		t.Fatal("no invalid stream: the test does not exercise VerdictOnly")
	}
}

// contradictedHistory is the history of TestInDoubtChoiceContradicted:
// u, of unknown outcome, writes x1 after fillers on keys of their own
// (the ones after u every fillerStep), and v reads x1 long after; it is
// valid at strong SI with u committed, which check confirms here before
// any test relies on it.
func contradictedHistory(t *testing.T, fillerStep int64) (*history.History, history.Options) {
	t.Helper()
	return contradictedWith(t, fillerStep, history.InitialEmpty, w("x", "0"), []history.Op{r("x", "0"), w("x", "1")}, r("x", "1"))
}

// contradictedWith builds contradictedHistory's shape: i runs first, the
// in-doubt u's ops at 1500, 147 fillers before it, fillers every
// fillerStep after it, then v's read at 2100 and 20 more fillers; it
// fails the test unless check finds the history valid (u committed).
func contradictedWith(t *testing.T, fillerStep int64, init history.InitialState, first history.Op, uOps []history.Op, read history.Op) (*history.History, history.Options) {
	t.Helper()
	u := txn("u", "a", 1500, 1510, uOps...)
	u.Status = history.Unknown
	txns := []history.Txn{txn("i", "a", 0, 10, first)}
	for s := int64(20); s < 1500; s += 10 {
		txns = append(txns, txn(fmt.Sprint("e", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, u)
	for s := int64(1600); s < 2000; s += fillerStep {
		txns = append(txns, txn(fmt.Sprint("f", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, txn("v", "c", 2100, 2101, read))
	for s := int64(2200); s < 2400; s += 10 {
		txns = append(txns, txn(fmt.Sprint("g", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	h := &history.History{Txns: txns}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: init, InDoubt: 1000}
	if res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1}); err != nil || res.Verdict != incremental.Valid {
		t.Fatalf("the history should be valid (u committed): %v %v", res.Verdict, err)
	}
	return h, opts
}

package online

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// stormTxn is a committed transaction with a time and a session.
func stormTxn(id, session string, start, end int64, ops ...history.Op) history.Txn {
	return history.Txn{ID: id, Session: session, HasSession: true, HasTime: true, Start: start, End: end, Status: history.Committed, Ops: ops}
}

func wOp(k, v string) history.Op {
	return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
}
func rOp(k, v string) history.Op {
	return history.Op{Kind: history.Read, Key: history.Key(k), Value: history.Value(v)}
}

// TestStormMemoByProjection is the history that breaks a memo of
// consistent regions keyed by their members (docs/SEMANTICS.md §5
// "Consistent regions remembered by their projection"): the region {A, B}
// is consistent in the first alert history and, with the same members,
// violates in the second (B's read names a value nobody wrote), as a
// ghost whose ops grew or a read the projection now keeps would make it.
// The memo must answer the first region again without a check, and must
// not answer the second: its core is found in its region, not by the
// check of the rest.
func TestStormMemoByProjection(t *testing.T) {
	defer func(b bool) { stormMemo = b }(stormMemo)
	stormMemo = true
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	// The rest's region is the largest (three transactions on z): it is
	// left to the last check.
	base := func(read string) *history.History {
		return &history.History{Txns: []history.Txn{
			stormTxn("memoC1", "c1", 0, 10, wOp("memo.z", "1")),
			stormTxn("memoA", "a", 20, 30, wOp("memo.x", "1")),
			stormTxn("memoC2", "c2", 40, 50, rOp("memo.z", "1"), wOp("memo.z", "2")),
			stormTxn("memoB", "b", 60, 70, rOp("memo.x", read)),
			stormTxn("memoC3", "c3", 80, 90, rOp("memo.z", "2")),
		}}
	}
	ctx := context.Background()
	o := &Online{opts: opts}
	hits := stormMemoHits.Load()
	for round := range 2 {
		ans, err := o.stormCores(ctx, base("1"))
		if err != nil {
			t.Fatal(err)
		}
		if len(ans) != 0 {
			t.Fatalf("round %d: cores %v in a consistent history", round, ans)
		}
	}
	if stormMemoHits.Load() == hits {
		t.Fatal("the memo never answered the region it had found consistent")
	}
	inRegion := stormRegionCores.Load()
	ans, err := o.stormCores(ctx, base("9"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ans) != 1 || !slices.Equal(ans[0].Core, []string{"memoB"}) {
		t.Fatalf("cores %v, want one: memoB's read of a value nobody wrote", ans)
	}
	if stormRegionCores.Load() == inRegion {
		t.Fatal("the core of {memoA, memoB} was not found in its region: the memo answered a region whose projection changed")
	}
}

// TestStormEncodeProjectionDistinct: two projections that differ in any
// field a check reads have different encodings, and one with database
// facts is not encoded.
func TestStormEncodeProjectionDistinct(t *testing.T) {
	a := stormTxn("T", "s", 1, 2, wOp("x", "1"), history.Op{Kind: history.Read, IsList: true, Key: "l", List: []history.Value{"1", "2"}})
	muts := []func(*history.Txn){
		func(t *history.Txn) { t.ID = "U" },
		func(t *history.Txn) { t.Session = "s2" },
		func(t *history.Txn) { t.Start = 0 },
		func(t *history.Txn) { t.End = 3 },
		func(t *history.Txn) { t.HasSession = false },
		func(t *history.Txn) { t.HasTime = false },
		func(t *history.Txn) { t.Status = history.Unknown },
		func(t *history.Txn) { t.Pos.Line = 7 },
		func(t *history.Txn) { t.Ops[0].Value = "2" },
		func(t *history.Txn) { t.Ops[0].Key = "y" },
		func(t *history.Txn) { t.Ops[0].Kind = history.Append },
		func(t *history.Txn) { t.Ops[1].List = []history.Value{"12"} },
		func(t *history.Txn) { t.Ops[1].IsList = false },
		func(t *history.Txn) { t.Ops = t.Ops[:1] },
	}
	enc := func(txns ...history.Txn) string {
		b, ok := encodeProjection(nil, &history.History{Txns: txns})
		if !ok {
			t.Fatal("no encoding")
		}
		return string(b)
	}
	want := enc(a)
	for k, m := range muts {
		b := a
		b.Ops = slices.Clone(a.Ops)
		m(&b)
		if enc(b) == want {
			t.Errorf("change %d: same encoding", k)
		}
	}
	if enc(a, a) == want || enc(a) != want {
		t.Error("encoding does not count the transactions, or is not deterministic")
	}
	if _, ok := encodeProjection(nil, &history.History{Txns: []history.Txn{a}, Facts: []history.Facts{{}}}); ok {
		t.Error("a history with facts was encoded")
	}
}

// TestStormRegionHistoryIsProjection holds the alert search's shortcuts to
// incremental's projection (docs/SEMANTICS.md §3) on generated histories
// of every preset (lists, duplicates, unknown and aborted outcomes): a
// key region as it is (regionHistory) is its projection, and the last
// check's history (lastHistory: untouched regions as they are, the
// others projected on their own) is the projection of h to what is left
// after random cores are taken. A region minus a member need not be its
// own projection, which is why lastHistory projects those.
func TestStormRegionHistoryIsProjection(t *testing.T) {
	enc := func(h *history.History) string {
		b, _ := encodeProjection(nil, h)
		return string(b)
	}
	differs := 0
	for i := range 24 {
		h, opts, _, rng := generatedCase(t, i, 2323, 60, 80, 3+i%4)
		ph := incremental.Prepare(h, opts)
		regions := keyRegions(h)
		remaining := make([]bool, len(h.Txns))
		for k := range remaining {
			remaining[k] = true
		}
		for _, r := range regions {
			in := make([]bool, len(h.Txns))
			for _, t := range r {
				in[t] = true
			}
			if enc(regionHistory(h, r)) != enc(ph.Project(in)) {
				t.Fatalf("history %d: region %v is not its projection", i, r)
			}
			if len(r) > 1 && rng.IntN(3) == 0 {
				// Take a member out, as a core would be.
				remaining[r[rng.IntN(len(r))]] = false
				in[r[0]] = false
				if enc(regionHistory(h, r[1:])) != enc(ph.Project(in)) {
					differs++
				}
			}
		}
		last := slices.Clone(remaining)
		for k := range last {
			if rng.IntN(4) == 0 {
				last[k] = false
			}
		}
		o := &Online{opts: opts}
		hl, pl := o.lastHistory(h, regions, last)
		if enc(hl) != enc(ph.Project(last)) {
			t.Fatalf("history %d: the last check's history is not the projection", i)
		}
		for k, p := range pl {
			if !last[p] || hl.Txns[k].ID != h.Txns[p].ID {
				t.Fatalf("history %d: position %d of the last check's history is %d", i, k, p)
			}
		}
	}
	if differs == 0 {
		t.Log("no region minus a member differed from its projection")
	}
}

// TestStormEndOnRegionCore is a step whose batch has a core in a small
// region and another in the largest one, which only the last check of a
// batch looks at (docs/SEMANTICS.md §5 "A batch ends at its regions'
// cores"): with the rule, the batch ends at the region's core and the
// step's next solve of the instance must still raise the other, in the
// same step, with the same cores as the batch that made the last check.
func TestStormEndOnRegionCore(t *testing.T) {
	defer func(b bool) { stormEndOnRegionCore = b }(stormEndOnRegionCore)
	h := &history.History{Txns: []history.Txn{
		stormTxn("L1", "l1", 0, 10, rOp("p", string(history.Null)), wOp("p", "1")),
		stormTxn("L2", "l2", 0, 10, rOp("p", string(history.Null)), wOp("p", "2")),
		stormTxn("S1", "s1", 0, 10, rOp("g", "9")),
		stormTxn("L3", "l3", 20, 30, rOp("p", "2")),
		stormTxn("L4", "l4", 40, 50, wOp("p", "3")),
		stormTxn("L5", "l5", 60, 70, rOp("p", "3")),
	}}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	run := func(on bool) []string {
		stormEndOnRegionCore = on
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		o.Release(h.Txns...)
		o.CloseAll()
		alerts, err := o.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range alerts {
			out = append(out, a.ID+" "+a.Class+" "+strings.Join(a.Core, ","))
		}
		slices.Sort(out)
		return out
	}
	want, got := run(false), run(true)
	if len(want) != 2 {
		t.Fatalf("the batch with its last check raised %v: the history does not test the rule", want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("a step ending its batch at the region's core raised\n%v\nwith the last check\n%v", got, want)
	}
}

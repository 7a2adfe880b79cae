package online

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/state"
)

// TestLooseOffsetsMerged: every chunk of this stream is dropped sparse,
// with the last writers of its keys still ghosts in memory (a loose
// offset of 0 each), and each of them is spilled a little later. Before
// mergeLoose, each such body kept a loose offset for the rest of the
// stream: 512 map entries per chunk, an eighth of the stream. Now the
// map stays within a constant, every body reads back from its merged
// block, a stale read of an old body in a merged chunk is alerted with
// its core, and a snapshot restores to the same engine.
func TestLooseOffsetsMerged(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(false))
	h, o := evictingEngine(t, "W0[0,10] w x1")
	ctx := context.Background()
	step := func(txns ...history.Txn) []*Alert {
		t.Helper()
		o.Release(txns...)
		for _, tx := range txns {
			o.Close(tx.ID)
		}
		as, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	step(h.Txns...)
	const n, keys = 16 * logChunkSize, 1000
	var all, batch []history.Txn
	most := 0
	for i := range n {
		at := int64(100 + 10*i)
		tx := history.Txn{ID: fmt.Sprintf("F%d", i), Start: at, End: at + 5, HasTime: true, Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("f%d", i%keys)), Value: history.Value(fmt.Sprint(i))}}}
		all = append(all, tx)
		batch = append(batch, tx)
		if len(batch) == 500 || i == n-1 {
			step(batch...)
			batch = batch[:0]
			most = max(most, len(o.spill.loose))
		}
	}
	if o.SpillError() != nil {
		t.Fatal(o.SpillError())
	}
	dropped := 0
	for c := range len(o.log.chunks) {
		if o.log.chunks[c] == nil {
			dropped++
		}
	}
	if dropped < 12 {
		t.Fatalf("only %d of %d chunks dropped: the stream does not test loose offsets", dropped, len(o.log.chunks))
	}
	// Without the merge the map ends near 512 per dropped chunk.
	if bound := looseMin + 2*looseMax; most > bound {
		t.Fatalf("the loose offsets reached %d entries (bound %d) after %d transactions in %d dropped chunks", most, bound, n, dropped)
	}
	for i, want := range all {
		got, err := o.body(i + 1) // release position: W0 is 0
		if err != nil {
			t.Fatalf("body %d: %v", i+1, err)
		}
		if got.ID != want.ID || fmt.Sprint(got.Ops) != fmt.Sprint(want.Ops) {
			t.Fatalf("body %d is %s %v, want %s %v", i+1, got.ID, got.Ops, want.ID, want.Ops)
		}
	}
	// A stale read of F(old), overwritten long ago: its body is read from
	// its chunk's merged block.
	const old = 3*logChunkSize + 11
	end := int64(100 + 10*n)
	as := step(history.Txn{ID: "R", Start: end, End: end + 5, HasTime: true, Status: history.Committed,
		Ops: []history.Op{{Kind: history.Read, Key: history.Key(fmt.Sprintf("f%d", old%keys)), Value: history.Value(fmt.Sprint(old))}}})
	if len(as) != 1 || !slices.Contains(as[0].Core, fmt.Sprintf("F%d", old)) || !slices.Contains(as[0].Core, "R") || len(as[0].Core) != 3 {
		t.Fatalf("alerts %v, want one core of F%d, its overwriter and R", as, old)
	}
	sameSnapshot(t, o, restoredFromBodies(t, o))
}

// TestLooseOffsetsMergedDurable: the same stream with a durable body
// file, checkpointed every few steps: a restart from each checkpoint
// (the file as a crash after it leaves it, with a torn record after)
// holds what an engine that ran through holds, across the merges, and
// reads every body back.
func TestLooseOffsetsMergedDurable(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(false))
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	dir := t.TempDir()
	live := filepath.Join(dir, "bodies")
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(live)})
	through := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	const n, keys = 12 * logChunkSize, 1000
	var all, batch []history.Txn
	restored, k := 0, 0
	for i := range n {
		at := int64(100 + 10*i)
		tx := history.Txn{ID: fmt.Sprintf("F%d", i), Start: at, End: at + 5, HasTime: true, Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("f%d", i%keys)), Value: history.Value(fmt.Sprint(i))}}}
		all = append(all, tx)
		batch = append(batch, tx)
		if len(batch) < 500 && i < n-1 {
			continue
		}
		for _, e := range []*Online{o, through} {
			e.Release(batch...)
			for _, tx := range batch {
				e.Close(tx.ID)
			}
			if _, err := e.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		batch = batch[:0]
		if k++; k%5 != 0 && i < n-1 {
			continue
		}
		back, _, _ := durableCheckpoint(t, o, opts, live, filepath.Join(dir, fmt.Sprintf("bodies-%d", k)), []byte{7, 1, 2, 3})
		want, _ := through.Snapshot()
		if got, _ := back.Snapshot(); !bytes.Equal(got, want) {
			t.Fatalf("after %d: the restored engine differs from one that ran through (%d blocks merged)", i, o.spill.merged)
		}
		for j := range i + 1 {
			got, err := back.body(j)
			if err != nil {
				t.Fatalf("after %d, restored body %d: %v", i, j, err)
			}
			if got.ID != all[j].ID || fmt.Sprint(got.Ops) != fmt.Sprint(all[j].Ops) {
				t.Fatalf("after %d, restored body %d is %s %v, want %s %v", i, j, got.ID, got.Ops, all[j].ID, all[j].Ops)
			}
		}
		restored++
	}
	if o.spill.merged == 0 || restored < 3 {
		t.Fatalf("%d blocks merged, %d restores: the stream does not test the merge", o.spill.merged, restored)
	}
}

// TestGhostOpsFollowGhosts: the ops build keeps for each ghost (ghostOps)
// hold only ghosts after every step: an entry goes when its ghost leaves
// (ghostGone). Before, entries of former ghosts stayed until the map held
// twice the ghosts, a sawtooth that was the live heap's largest growth
// after 10% of the PostgreSQL recording.
func TestGhostOpsFollowGhosts(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(false))
	h, o := evictingEngine(t, "W0[0,10] w x1")
	// Every ghost a member's key meets is built (no bypass, no fold), so
	// that build registers ops for many ghosts.
	o.noBypass, o.noFold = true, true
	ctx := context.Background()
	o.Release(h.Txns...)
	o.Close(h.Txns[0].ID)
	if _, err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	const n, keys = 20000, 300
	var batch []history.Txn
	most := 0
	last := map[history.Key]history.Value{}
	for i := range n {
		at := int64(100 + 10*i)
		// A read of the latest value of a key written half a period ago:
		// its writer, a ghost by then, is built into the step's instance
		// and stays a ghost for a while.
		rk := history.Key(fmt.Sprintf("f%d", (i+keys/2)%keys))
		ops := []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("f%d", i%keys)), Value: history.Value(fmt.Sprint(i))}}
		if v, ok := last[rk]; ok {
			ops = append(ops, history.Op{Kind: history.Read, Key: rk, Value: v})
		}
		last[ops[0].Key] = ops[0].Value
		batch = append(batch, history.Txn{ID: fmt.Sprintf("F%d", i), Start: at, End: at + 5, HasTime: true, Status: history.Committed, Ops: ops})
		if len(batch) < 100 && i < n-1 {
			continue
		}
		o.Release(batch...)
		for _, tx := range batch {
			o.Close(tx.ID)
		}
		if as, err := o.Step(ctx); err != nil || len(as) > 0 {
			t.Fatalf("after %d: alerts %v, error %v on a serial history", i, as, err)
		}
		batch = batch[:0]
		for g := range o.ev.ghostOps {
			if o.ev.GhostKeys[g] == nil {
				t.Fatalf("after %d: ghostOps holds %d, not a ghost (%d entries, %d ghosts)", i, g, len(o.ev.ghostOps), len(o.ev.GhostKeys))
			}
		}
		most = max(most, len(o.ev.ghostOps))
	}
	if most == 0 || o.ev.Evicted < n/2 {
		t.Fatalf("ghostOps at most %d, %d evicted: the stream does not test it", most, o.ev.Evicted)
	}
}

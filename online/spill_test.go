package online

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/state"
)

// TestSpilledBodiesServeAlerts: W1's body leaves memory once W2 overwrites
// it and both are evicted; a later stale read of x1 needs it back, for the
// alert's core and for rendering it.
func TestSpilledBodiesServeAlerts(t *testing.T) {
	h, o := evictingEngine(t, "W1[0,10] w x1, w y1 · W2[20,30] w x2, w y2 · W3[40,50] w y3 · R[100,110] r x1")
	ctx := context.Background()
	o.Release(h.Txns[:3]...)
	o.Close("W1", "W2", "W3")
	if _, err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	i, _ := o.find("W1")
	if !o.spill.spilled(i) || len(o.log.at(i).Ops) != 0 {
		t.Fatalf("W1 not spilled (stats %+v, spill error %v)", o.Stats(), o.SpillError())
	}
	// A restart from a checkpoint with the bodies stored apart, read one
	// at a time: W1 goes straight back to the spill.
	snap, bodies, err := o.SnapshotBodies(0)
	if err != nil {
		t.Fatal(err)
	}
	o, err = RestoreOnlineEach(o.opts, snap, func(body func([]byte) error) error {
		for _, b := range bodies {
			if err := body(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i, _ := o.find("W1"); !o.spill.spilled(i) || len(o.log.at(i).Ops) != 0 {
		t.Fatalf("W1 in memory after the restore (spill error %v)", o.SpillError())
	}
	o.Release(h.Txns[3])
	o.Close("R")
	alerts, err := o.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 || !slices.Equal(alerts[0].Core, []string{"W1", "W2", "R"}) {
		t.Fatalf("alerts %v, want one with core W1 W2 R", func() (c [][]string) {
			for _, a := range alerts {
				c = append(c, a.Core)
			}
			return
		}())
	}
	w1 := o.Txn("W1")
	if w1 == nil || len(w1.Ops) != 2 || w1.Ops[0].Kind != history.Write {
		t.Fatalf("W1 as rendered: %+v", w1)
	}
	// The whole snapshot carries every body, spilled ones included.
	snap, err = o.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	back, err := RestoreOnline(o.opts, snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Txn("W2"); got == nil || len(got.Ops) != 2 {
		t.Fatalf("W2 after restore: %+v", got)
	}
}

// TestSpillCodecRoundTrip: every generated body, lists and unknown
// outcomes included, comes back from a spill record as it went in, and a
// record cut short never panics and is an error unless only its last byte
// is missing.
func TestSpillCodecRoundTrip(t *testing.T) {
	var txns []history.Txn
	for _, preset := range gen.PresetNames() {
		cfg, _ := gen.Preset(preset)
		cfg.Txns, cfg.UnknownRatio, cfg.Seed = 300, 0.1, 7
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		txns = append(txns, h.Txns...)
	}
	txns = append(txns,
		history.Txn{ID: "empty-list", Ops: []history.Op{{Kind: history.Read, IsList: true, Key: "l", List: []history.Value{}}}},
		history.Txn{ID: "pos", Pos: history.Pos{Source: "f.jsonl", Line: 7, Offset: -1}, Start: -5, End: 1 << 62, HasTime: true})
	for i := range txns {
		rec := appendTxn(nil, &txns[i])
		back, err := decodeTxn(rec)
		if err != nil || !reflect.DeepEqual(back, txns[i]) {
			t.Fatalf("%s: got %+v (%v), want %+v", txns[i].ID, back, err, txns[i])
		}
		if i%50 == 0 {
			for n := 0; n < len(rec); n++ {
				if _, err := decodeTxn(rec[:n]); err == nil && n < len(rec)-1 {
					t.Fatalf("%s: a record cut to %d of %d bytes decoded", txns[i].ID, n, len(rec))
				}
			}
		}
	}
}

// TestReplayInSmallChunks: the rebuild after an alert replays the released
// history a chunk per step; with chunks of a few transactions, generated
// histories with injected anomalies (alerts, so replays) still agree with
// check and every alert is a core.
func TestReplayInSmallChunks(t *testing.T) {
	defer func(n int) { replayChunk = n }(replayChunk)
	replayChunk = 5
	// And the flags of all but the newest 64 transactions folded into
	// their prefix (runflags.go), through replays, restores and alerts.
	defer func(above, keep int) { foldAbove, foldKeep = above, keep }(foldAbove, foldKeep)
	foldAbove, foldKeep = 1, 1
	sweepGenerated(t, tinyCount(30), 29, func(int) int { return 2 })
}

// TestDroppedChunksServeAlerts: once every transaction of a chunk of the
// released log is spilled, the chunk's stubs are dropped, and everything
// that reads the past still works from the spill: an alert whose core
// reaches into a dropped chunk, rendering its members, the quarantine that
// brings them back, the replay after the alert, and a restore.
func TestDroppedChunksServeAlerts(t *testing.T) {
	h, o := evictingEngine(t, "W1[0,10] w x1, w y1 · W2[20,30] w x2, w y2")
	ctx := context.Background()
	step := func(txns ...history.Txn) {
		t.Helper()
		o.Release(txns...)
		for _, tx := range txns {
			o.Close(tx.ID)
		}
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step(h.Txns...)
	x, y := h.Txns[0].Ops[0].Key, h.Txns[0].Ops[1].Key
	const fillers = 3*logChunkSize + 100
	var batch []history.Txn
	for i := range fillers {
		at := int64(100 + 10*i)
		batch = append(batch, history.Txn{ID: fmt.Sprintf("F%d", i), Start: at, End: at + 5, HasTime: true, Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("f%d", i%50)), Value: history.Value(fmt.Sprint(i))}}})
		if i == logChunkSize {
			// W2 is the live version of x and y until here: its chunk
			// could not be dropped.
			batch[len(batch)-1].Ops = append(batch[len(batch)-1].Ops, history.Op{Kind: history.Write, Key: x, Value: "9"}, history.Op{Kind: history.Write, Key: y, Value: "9"})
		}
		if len(batch) == 500 || i == fillers-1 {
			step(batch...)
			batch = batch[:0]
		}
	}
	if o.SpillError() != nil {
		t.Fatal(o.SpillError())
	}
	dropped := 0
	for _, c := range o.log.chunks {
		if c == nil {
			dropped++
		}
	}
	if dropped < 2 {
		t.Fatalf("%d of %d chunks dropped (stats %+v)", dropped, len(o.log.chunks), o.Stats())
	}
	if o.log.inMemory(0) {
		t.Fatalf("W1 still in memory after its chunk was spilled")
	}
	end := int64(100 + 10*fillers)
	r := history.Txn{ID: "R", Start: end, End: end + 5, HasTime: true, Status: history.Committed,
		Ops: []history.Op{{Kind: history.Read, Key: x, Value: "1"}}}
	o.Release(r)
	o.Close("R")
	alerts, err := o.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 || len(alerts[0].Core) != 3 || !slices.Contains(alerts[0].Core, "W1") || !slices.Contains(alerts[0].Core, "R") {
		t.Fatalf("%d alerts (%v), want one with W1, R and an overwrite of x", len(alerts), alerts)
	}
	if w1 := o.Txn("W1"); w1 == nil || len(w1.Ops) != 2 {
		t.Fatalf("W1 as rendered: %+v", w1)
	}
	if w1 := o.log.loose[0]; w1 == nil || w1.ID != "W1" || !o.quar.get(0) {
		t.Fatalf("quarantined W1 not back in memory from its dropped chunk: %+v", w1)
	}
	// The stream goes on after the replay, and its transactions are
	// evicted again.
	r2 := history.Txn{ID: "R2", Start: end + 10, End: end + 15, HasTime: true, Status: history.Committed,
		Ops: []history.Op{{Kind: history.Write, Key: x, Value: "3"}}}
	step(r2)
	if len(o.Alerts()) != 1 || o.Stats().Window > 100 {
		t.Fatalf("after the alert: %d alerts, stats %+v", len(o.Alerts()), o.Stats())
	}
	if len(o.log.loose) > 10 {
		t.Fatalf("%d transactions of dropped chunks still loose in memory", len(o.log.loose))
	}
	back := restoredFromBodies(t, o)
	if got := back.Txn("F5"); got == nil || len(got.Ops) != 1 {
		t.Fatalf("F5 after restore: %+v", got)
	}
	// The restore spilled the evicted bodies as records and dropped their
	// chunks again, and holds the same state.
	sameSnapshot(t, o, back)
	droppedBack := 0
	for _, c := range back.log.chunks {
		if c == nil {
			droppedBack++
		}
	}
	if droppedBack == 0 {
		t.Fatal("the restore dropped no chunk")
	}
}

// TestTxnLogModel holds the chunked log to a plain slice through random
// spills and reloads.
func TestTxnLogModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var l txnLog
	var model []history.Txn
	spilled := map[int]bool{}
	dropped := map[int]bool{} // chunks the log reported dropped
	for range 40000 {
		switch n := len(model); {
		case n == 0 || rng.IntN(3) == 0:
			tx := history.Txn{ID: fmt.Sprint(n), Start: int64(n), Ops: []history.Op{{Kind: history.Write, Key: "k"}}}
			got, c := l.append(tx)
			if got != n {
				t.Fatalf("append gave %d, want %d", got, n)
			}
			if c >= 0 {
				if l.chunks[c] != nil || dropped[c] {
					t.Fatalf("append reported chunk %d dropped (again?)", c)
				}
				dropped[c] = true
			}
			model = append(model, tx)
		default:
			i := rng.IntN(n)
			if spilled[i] {
				if rng.IntN(8) == 0 {
					l.markUnspilled(i)
					l.put(i, model[i])
					delete(spilled, i)
				}
				continue
			}
			if c := l.markSpilled(i, history.Txn{ID: model[i].ID, Start: model[i].Start}); c >= 0 {
				if l.chunks[c] != nil || dropped[c] {
					t.Fatalf("markSpilled reported chunk %d dropped (again?)", c)
				}
				dropped[c] = true
			}
			spilled[i] = true
		}
		if n := len(model); n > 0 && (l.last().ID != model[n-1].ID) {
			t.Fatalf("last: %s, want %s", l.last().ID, model[n-1].ID)
		}
	}
	for i := range model {
		switch {
		case !spilled[i]:
			if got := l.at(i); !reflect.DeepEqual(*got, model[i]) {
				t.Fatalf("%d: %+v, want %+v", i, *got, model[i])
			}
		case l.inMemory(i):
			if got := l.at(i); got.ID != model[i].ID || got.Ops != nil {
				t.Fatalf("%d: stub %+v", i, *got)
			}
		}
	}
	for c := range l.chunks {
		if (l.chunks[c] == nil) != dropped[c] {
			t.Fatalf("chunk %d dropped: %v, reported: %v", c, l.chunks[c] == nil, dropped[c])
		}
		all := true
		for i := c * logChunkSize; i < min(len(model), (c+1)*logChunkSize); i++ {
			if l.chunks[c] == nil && !spilled[i] && l.loose[i] == nil {
				t.Fatalf("chunk %d dropped with %d neither spilled nor loose", c, i)
			}
			all = all && spilled[i]
		}
		if full := (c+1)*logChunkSize <= len(model); l.chunks[c] != nil && all && full && c != len(l.chunks)-1 {
			t.Fatalf("chunk %d kept with every transaction spilled", c)
		}
	}
}

// TestSpillAppendRaw: a record copied raw is the record written, short or
// longer than one read.
func TestSpillAppendRaw(t *testing.T) {
	s := spill{file: NewMemBodyFile(false)}
	if err := s.open(); err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for i := range 40 {
		tx := history.Txn{ID: fmt.Sprint("t", i), Ops: []history.Op{{Kind: history.Write, Key: "k", Value: history.Value(strings.Repeat("v", i*i))}}}
		if err := s.put(i, &tx); err != nil {
			t.Fatal(err)
		}
		want = append(want, appendTxn(nil, &tx))
	}
	for i := range want {
		got, err := s.record(i)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Fatalf("record %d (%d bytes): %v", i, len(want[i]), err)
		}
	}
}

// TestSpillOffsetsWrittenOut holds the spill's offsets to a model through
// chunks written out (their offsets moved to the file) and transactions
// of such chunks brought back into memory and spilled again: spilled and
// get agree with the model for every transaction, and a written-out
// chunk leaves no offsets in memory.
func TestSpillOffsetsWrittenOut(t *testing.T) {
	s := spill{file: NewMemBodyFile(false)}
	if err := s.open(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 1))
	n := 3*logChunkSize + 100
	body := func(i, gen int) history.Txn {
		return history.Txn{ID: fmt.Sprint("t", i), Start: int64(gen), Ops: []history.Op{{Kind: history.Write, Key: "k", Value: history.Value(strings.Repeat("v", i%37))}}}
	}
	gen := make([]int, n) // the body last spilled, or -1: in memory
	for i := range gen {
		gen[i] = -1
	}
	for i := range n {
		tx := body(i, 0)
		if err := s.put(i, &tx); err != nil {
			t.Fatal(err)
		}
		gen[i] = 0
		if (i+1)%logChunkSize == 0 && i+1 < n {
			if err := s.writeOut(i / logChunkSize); err != nil {
				t.Fatal(err)
			}
		}
	}
	for round := 1; round < 2000; round++ {
		i := rng.IntN(n)
		if gen[i] >= 0 {
			s.setAt(i, 0) // back in memory
			gen[i] = -1
			continue
		}
		tx := body(i, round)
		if err := s.put(i, &tx); err != nil {
			t.Fatal(err)
		}
		gen[i] = round
	}
	for i := range n {
		if got := s.spilled(i); got != (gen[i] >= 0) {
			t.Fatalf("spilled(%d) = %v, model %v", i, got, gen[i] >= 0)
		}
		if gen[i] < 0 {
			continue
		}
		tx, err := s.get(i)
		if err != nil || !reflect.DeepEqual(tx, body(i, gen[i])) {
			t.Fatalf("get(%d) = %+v, %v; want %+v", i, tx, err, body(i, gen[i]))
		}
	}
	for c := range 3 {
		if s.at[c] != nil {
			t.Fatalf("chunk %d's offsets still in memory", c)
		}
	}
}

// BenchmarkSpillPass reads every spilled body back in release order, as
// an alert's confirmation and the replay after it do.
func BenchmarkSpillPass(b *testing.B) {
	// On disk, as run has it: the pass's reads are what it measures.
	s := spill{file: state.NewFileBodies("")}
	if err := s.open(); err != nil {
		b.Fatal(err)
	}
	const n = 50000
	for i := range n {
		tx := history.Txn{ID: fmt.Sprint("t", i), Session: "s", Start: int64(i), End: int64(i + 5), HasTime: true,
			Ops: []history.Op{{Kind: history.Write, Key: "k", Value: history.Value(fmt.Sprint(i))}, {Kind: history.Read, Key: "x", Value: "1"}}}
		if err := s.put(i, &tx); err != nil {
			b.Fatal(err)
		}
	}
	// The log drops chunks once spilled: their offsets go to the file.
	for c := range n / logChunkSize {
		if err := s.writeOut(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		for i := range n {
			if _, err := s.get(i); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/body")
}

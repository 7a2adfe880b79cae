package sionline

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// The histories of docs/SEMANTICS.md §5 "The window at the snapshot
// levels", each one that breaks a naive version of a rule there. The
// engine keeps every transaction today, so it gets them right; they hold
// the line for an engine that evicts.

func txn(id, sess string, start, end int64, ops ...history.Op) history.Txn {
	return history.Txn{ID: id, Session: sess, HasSession: true, Start: start, End: end, HasTime: true, Status: history.Committed, Ops: ops}
}

func w(k, v string) history.Op {
	return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
}

func r(k, v string) history.Op {
	return history.Op{Kind: history.Read, Key: history.Key(k), Value: history.Value(v)}
}

// inOrder feeds h in start order, one event per drain, with tick.
func inOrder(h *history.History, tick int64) arrival {
	a := arrival{order: make([]int, len(h.Txns)), batch: 1, tick: tick, restart: -1}
	for i := range a.order {
		a.order[i] = i
	}
	return a
}

// SS1: a snapshot may be older than the newest closed writer (GSI). w1
// and w2 write x one after the other and both have closed when r begins;
// r reads w1's version. Under GSI real time orders commits only (C_w2
// before C_r), and r's snapshot may be taken before C_w2: valid. The
// serializable rule "an overwritten version whose overwriter has closed is
// dead" would evict w1 and find r's read without a source: a false alarm.
// Under strong SI real time orders C_w2 before B_r: the stale read is an
// anomaly.
func TestStaleSnapshotIsGSI(t *testing.T) {
	h := &history.History{Txns: []history.Txn{
		txn("w1", "a", 0, 1, w("x", "1")),
		txn("w2", "a", 2, 3, w("x", "2")),
		txn("r", "b", 5, 6, r("x", "1")),
	}}
	for _, tc := range []struct {
		lv    history.Level
		alert bool
	}{{history.GeneralizedSnapshotIsolation, false}, {history.StrongSnapshotIsolation, true}, {history.SnapshotIsolation, true}} {
		opts := history.Options{Level: tc.lv, InitialState: history.InitialEmpty}
		fired, _ := stream(t, h, opts, inOrder(h, 1))
		if (len(fired) > 0) != tc.alert {
			t.Errorf("%s: %d alerts, want alert=%t", tc.lv, len(fired), tc.alert)
		}
		if tc.lv == history.SnapshotIsolation && len(fired) > 0 && !fired[0].NeedsRealtime {
			t.Errorf("snapshot-isolation: the stale read is allowed by SI, yet the alert does not say needs_realtime")
		}
	}
}

// SS2: the live versions of a key under strong SI are a set. w1 and w2
// write x with overlapping client intervals; both have closed when r
// begins. Either may have committed last (their commit points lie
// anywhere in their intervals), so r may read either version: valid
// both ways. "The live version is the writer that ended last" (w2) makes
// a reader of w1's version a false alarm; a third writer w3 after both
// overwrites both, and then a read of either is stale.
func TestLiveVersionsAreASet(t *testing.T) {
	for _, tc := range []struct {
		read  string
		third bool
		alert bool
	}{{"1", false, false}, {"2", false, false}, {"1", true, true}, {"2", true, true}} {
		h := &history.History{Txns: []history.Txn{
			txn("w1", "a", 0, 3, w("x", "1")),
			txn("w2", "b", 1, 4, w("x", "2")),
		}}
		if tc.third {
			h.Txns = append(h.Txns, txn("w3", "a", 5, 6, w("x", "3")))
		}
		h.Txns = append(h.Txns, txn("r", "c", 8, 9, r("x", tc.read)))
		opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty}
		fired, _ := stream(t, h, opts, inOrder(h, 1))
		if (len(fired) > 0) != tc.alert {
			t.Errorf("read %s third=%t: %d alerts, want alert=%t", tc.read, tc.third, len(fired), tc.alert)
		}
	}
}

// SS3: a transaction's two nodes close at different times. b's begin is
// fixed as soon as it is released (every commit real time puts before it
// is released), its commit only when it has time-closed: a writer c that
// begins after b began but before it ended may still be ordered before
// C_b, and b's own lost update with c is found only once both have
// closed. Treating b as settled when its begin is (at release) would
// miss the anomaly; the engine alerts once both have closed.
func TestCommitClosesAfterBegin(t *testing.T) {
	h := &history.History{Txns: []history.Txn{
		txn("init", "a", 0, 1, w("x", "0")),
		txn("b", "b", 2, 10, r("x", "0"), w("x", "1")),
		txn("c", "c", 4, 6, r("x", "0"), w("x", "2")),
	}}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty}
	fired, _ := stream(t, h, opts, inOrder(h, 1))
	if len(fired) != 1 || len(fired[0].Core) != 3 {
		t.Fatalf("%d alerts (%v), want the lost update of b and c (with init, the writer both read)", len(fired), fired)
	}
}

// SS4: without real time a later writer may be a read's source (S6). t2
// reads x=3, which only t0 wrote, and as an intermediate value: G1b on
// the released prefix, at every level of the family. t4, which begins
// after t2 ended, writes x=3 too: at Adya SI it may be t2's source, so
// the whole stream is valid there; at strong SI, which run checks, it may
// not. An alert fired before t4 is released says the core violates SI on
// what was released (needs_realtime false, and true of that prefix); one
// fired after says needs_realtime. Claiming a proven SI violation of the
// whole stream in the first case would be wrong.
func TestLaterWriterMayBeTheSource(t *testing.T) {
	h := &history.History{Txns: []history.Txn{
		txn("t0", "a", 0, 5, w("x", "3"), w("x", "1")),
		txn("t2", "a", 11, 16, r("x", "3")),
		txn("t4", "a", 17, 21, w("x", "3")),
	}}
	si := history.Options{Level: history.SnapshotIsolation, InitialState: history.InitialEmpty}
	if ok, _, _ := oracle.Check(h, si); !ok {
		t.Fatal("the whole stream should satisfy snapshot-isolation (t4 may be t2's source)")
	}
	for _, tc := range []struct {
		tick int64
		need bool
	}{{1, false}, {100, true}} {
		fired, _ := stream(t, h, si, inOrder(h, tc.tick))
		if len(fired) != 1 {
			t.Fatalf("tick %d: %d alerts, want 1 (strong SI is checked)", tc.tick, len(fired))
		}
		if fired[0].NeedsRealtime != tc.need {
			t.Errorf("tick %d: needs_realtime=%t, want %t", tc.tick, fired[0].NeedsRealtime, tc.need)
		}
		if !tc.need {
			if ok, _, _ := oracle.Check(oracle.Project(released(h, fired[0].Watermark), si, fired[0].Core), si); ok {
				t.Errorf("tick %d: the released prefix satisfies SI, yet the alert claims it violates", tc.tick)
			}
		}
	}
}

// pad returns committed writers of key "pad", one every 10 time units from
// from to to, that move the watermark so that earlier members close and
// may be evicted.
func pad(from, to int64) []history.Txn {
	var out []history.Txn
	for s := from; s < to; s += 10 {
		out = append(out, txn("p"+strconv.FormatInt(s, 10), "p", s, s+1, w("pad", strconv.FormatInt(s, 10))))
	}
	return out
}

// SS5 (a pin, docs/SEMANTICS.md §5 "Eviction at strong snapshot
// isolation"): under an unknown initial state r1 reads x5 and, long after
// r1 was evicted, r2 reads x6: one initial value cannot be both. An
// eviction that forgets what r1's read fixed misses the alert.
func TestEvictionPinsInitialValues(t *testing.T) {
	h := &history.History{Txns: append(append([]history.Txn{txn("r1", "a", 0, 1, r("x", "5"))}, pad(10, 200)...),
		txn("r2", "b", 300, 301, r("x", "6")))}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialUnknown}
	if ok, _, _ := oracle.Check(h, opts); ok {
		t.Fatal("the history should be invalid")
	}
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(5, 5)), 1, 1, -1)
	if len(fired) == 0 {
		t.Fatal("no alert: the evicted read's initial value was forgotten")
	}
	if eng.Stats().Evicted == 0 {
		t.Fatal("nothing was evicted: the history does not exercise the ghost")
	}
}

// SS6 (an in-doubt reader): u's outcome is unknown; v reads u's write, so
// u committed, and then u's read of x1, which nobody wrote, is an
// anomaly, known once u has time-closed. An eviction of u while its reads
// are out of the instance (A_t drops an in-doubt reader's reads) would
// miss it; the screen has them from the end of u's client interval.
func TestEvictionKeepsInDoubtReads(t *testing.T) {
	u := txn("u", "a", 0, 2, r("x", "1"), w("y", "1"))
	u.Status = history.Unknown
	h := &history.History{Txns: append([]history.Txn{u, txn("v", "b", 5, 6, r("y", "1"))}, pad(10, 300)...)}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 100}
	if ok, _, _ := oracle.Check(h, opts); ok {
		t.Fatal("the history should be invalid")
	}
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(6, 6)), 1, 1, -1)
	if len(fired) == 0 {
		t.Fatal("no alert: the in-doubt reader's read was lost")
	}
	if eng.Stats().Evicted == 0 {
		t.Fatal("nothing was evicted: the history does not exercise the window")
	}
}

package sionline

import (
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestWritesLogNewest holds the archived writers' index, a log since
// si30 (docs/SEMANTICS.md §5 "The archived writers' index is a log
// (si30)"), to what the map it replaced answered: per version the
// newest archived writer's seq (a re-admitted writer evicted again
// wins over its first record, a later writer of the same version over
// an earlier one), nothing for a version never written, and nothing
// once two generations have passed since a version's last record.
func TestWritesLogNewest(t *testing.T) {
	w := func(k, v string) history.Op {
		return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
	}
	var ix writes
	ix.add(&history.Txn{ID: "a", Status: history.Committed, Ops: []history.Op{w("x", "1"), w("y", "1")}}, 1)
	ix.add(&history.Txn{ID: "b", Status: history.Committed, Ops: []history.Op{w("x", "1")}}, 7)
	ix.add(&history.Txn{ID: "c", Status: history.Aborted, Ops: []history.Op{w("z", "1")}}, 8)
	ix.add(&history.Txn{ID: "a", Status: history.Committed, Ops: []history.Op{w("y", "1")}}, 9)
	ask := func(k, v string) (uint64, bool) {
		h := versionHash(history.Key(k), history.Value(v))
		s, ok := ix.newest(map[uint64]bool{h: true})[h]
		return s, ok
	}
	for _, c := range []struct {
		k, v string
		seq  uint64
		ok   bool
	}{{"x", "1", 7, true}, {"y", "1", 9, true}, {"z", "1", 0, false}, {"x", "2", 0, false}} {
		if s, ok := ask(c.k, c.v); s != c.seq || ok != c.ok {
			t.Errorf("%s=%s: got seq %d (%v), want %d (%v)", c.k, c.v, s, ok, c.seq, c.ok)
		}
	}
	// ("ab", "c") and ("a", "bc") are two versions.
	if versionHash("ab", "c") == versionHash("a", "bc") {
		t.Errorf("versionHash joins key and value without a separator")
	}
	// One generation later the versions are still found (prev); two
	// later they are gone, as the map's generations dropped them.
	for n := 0; n < writesGen; n++ {
		ix.add(&history.Txn{ID: "f", Status: history.Committed, Ops: []history.Op{w("f", fmt.Sprint(n))}}, uint64(100+n))
	}
	if s, ok := ask("x", "1"); !ok || s != 7 {
		t.Errorf("one generation later: x=1 got %d (%v), want 7", s, ok)
	}
	for n := 0; n < writesGen; n++ {
		ix.add(&history.Txn{ID: "g", Status: history.Committed, Ops: []history.Op{w("g", fmt.Sprint(n))}}, uint64(100000+n))
	}
	if _, ok := ask("x", "1"); ok {
		t.Errorf("two generations later x=1 is still indexed")
	}
	if s, ok := ask("g", "0"); !ok || s != 100000 {
		t.Errorf("g=0 got %d (%v), want 100000", s, ok)
	}
	ix.reset()
	if _, ok := ask("g", "0"); ok {
		t.Errorf("reset left g=0 indexed")
	}
}

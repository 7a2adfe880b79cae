package online

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Tests of the list rule under an unknown initial state
// (evict_list_init.go, docs/SEMANTICS.md §5 "Lists under an unknown
// initial state"). The scripts testdata/evict/list_initial.txt and
// list_initial_replaced.txt show it step by step; these run it on
// generated streams whose list keys start non-empty, against check.

// withInitialLists gives every list key of h a non-empty initial list in
// about half the cases: each committed read of the key shows it before
// the appends it showed (a valid history stays valid under an unknown
// initial state: the initial list is a variable). With corrupt, one
// read of a key whose initial list was read more than once names another
// initial list (usually an anomaly; check is the judge).
func withInitialLists(h *history.History, rng *rand.Rand, corrupt bool) {
	init := map[history.Key][]history.Value{}
	type at struct{ t, o int }
	var reads []at
	for ti := range h.Txns {
		for oi := range h.Txns[ti].Ops {
			op := &h.Txns[ti].Ops[oi]
			if op.Kind != history.Read || !op.IsList {
				continue
			}
			l, ok := init[op.Key]
			if !ok {
				for j := range rng.IntN(3) {
					l = append(l, history.Value(strconv.Itoa(900000+1000*len(init)+j)))
				}
				init[op.Key] = l
			}
			op.List = append(append([]history.Value(nil), l...), op.List...)
			reads = append(reads, at{ti, oi})
		}
	}
	if !corrupt || len(reads) < 2 {
		return
	}
	r := reads[len(reads)/2+rng.IntN((len(reads)+1)/2)]
	op := &h.Txns[r.t].Ops[r.o]
	n := len(init[op.Key])
	op.List = append([]history.Value{history.Value(strconv.Itoa(800000 + rng.IntN(1000)))}, op.List[n:]...)
}

// listInitStreams runs n generated list streams with initial lists
// through the evicting engine under an unknown initial state and
// compares each with check: the same verdict, every alert a core, no
// disagreement with the bodies. It returns the streams that disagreed
// and the transactions released and evicted.
func listInitStreams(t *testing.T, n int) (bad []string, released, evicted int) {
	t.Helper()
	before := sweepEvicted
	for i := range n {
		h, opts, cfg, rng := listCase(t, i, 233, 60, 240)
		opts.InitialState = history.InitialUnknown
		withInitialLists(h, rng, i%3 == 2)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := sweep(t, h, opts)
		if (len(got) > 0) != (res.Verdict == incremental.Invalid) {
			bad = append(bad, fmt.Sprintf("history %d (%v): alerts %v, check %s", i, cfg.Inject, got, res.Verdict))
			continue
		}
		checkAlertCores(t, h, opts, got)
		released += len(h.Txns)
	}
	return bad, released, sweepEvicted - before
}

// listInitCount is how many streams the tests run
// (STREAMCHECK_LISTINIT_N for a long sweep).
func listInitCount(def int) int {
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_LISTINIT_N")); err == nil && n > 0 {
		return n
	}
	return tinyCount(def)
}

// TestListInitialUnknownMatchesCheck: list streams whose keys start with
// unknown, non-empty initial lists (some with one read naming another)
// give check's verdict through the evicting engine, and list
// transactions leave: before the rule, every one stayed (list-key).
func TestListInitialUnknownMatchesCheck(t *testing.T) {
	bad, released, evicted := listInitStreams(t, listInitCount(30))
	for _, b := range bad {
		t.Error(b)
	}
	if evicted < released/2 {
		t.Errorf("only %d of %d transactions evicted", evicted, released)
	}
}

// TestListInitialNaiveMisses: the naive rule, whose prefix does not
// carry the initial list that leaving reads named (IL2 off: the initial
// node reads nothing), misses an anomaly on the same streams: the tests
// above can tell the rule from it.
func TestListInitialNaiveMisses(t *testing.T) {
	listInitNaive = true
	defer func() { listInitNaive = false }()
	bad, _, _ := listInitStreams(t, listInitCount(20))
	if len(bad) == 0 {
		t.Fatal("the naive rule agreed with check on every stream")
	}
	t.Logf("naive: %d disagreements, first %s", len(bad), bad[0])
}

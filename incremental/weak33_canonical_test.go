package incremental

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestCanonicalInComponentMatchesWhole: the canonical core searched in
// its component (canonicalCore, docs/SEMANTICS.md §5 "Canonical cores
// searched in their component") is the one the search over the whole
// instance finds (canonicalCoreWhole, the search before it, kept here as
// the oracle), for every anomaly CheckWeakOnline reports in turn. The
// histories are unions of one to four random tiny histories on disjoint
// keys and sessions, their times interleaved, so that an instance has
// several components, often more than one violating (the projection to
// the other components below the found core, and the search there, run).
// A core is also checked to be the least violating subset by brute
// force over every subset when the union has at most 12 transactions.
func TestCanonicalInComponentMatchesWhole(t *testing.T) {
	n := tinyCount(300)
	ctx := context.Background()
	for li, lv := range weakLevels {
		for _, initial := range []history.InitialState{history.InitialEmpty, history.InitialUnknown} {
			t.Run(fmt.Sprintf("%s/init=%s", lv, initial), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(li)+33, uint64(initial)+3300))
				cfg := oracle.DefaultTinyConfig()
				cfg.InitialValues = initial == history.InitialUnknown
				opts := history.DefaultOptions()
				opts.Level, opts.InitialState = lv, initial
				var invalid, multi, brute, second, undecided int
				for i := 0; i < n; i++ {
					h := tinyUnion(rng, cfg, 1+rng.IntN(4))
					if h.Validate() != nil {
						continue
					}
					res, err := CheckWeakOnline(ctx, h, opts, Config{MaxAnomalies: 4}, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, st, unk := wholeSearchCores(ctx, h, opts, 4)
					second += st
					if unk {
						undecided++
						continue
					}
					if res.Verdict != Invalid {
						if len(want) != 0 && res.Verdict == Valid {
							t.Fatalf("history %d: valid, the whole search found %v\n%s", i, want, dump(h))
						}
						continue
					}
					invalid++
					if len(res.Anomalies) > 1 {
						multi++
					}
					var got [][]string
					for _, a := range res.Anomalies {
						c := slices.Clone(a.Core)
						slices.Sort(c)
						got = append(got, c)
					}
					if !slices.EqualFunc(got, want, slices.Equal) {
						t.Fatalf("history %d (%s): cores %v, the whole search's %v\n%s", i, lv, got, want, dump(h))
					}
					if len(h.Txns) <= 12 {
						brute++
						if least := leastViolating(ctx, h, opts); !slices.Equal(least, got[0]) {
							t.Fatalf("history %d: core %v, the least violating subset %v\n%s", i, got[0], least, dump(h))
						}
					}
				}
				t.Logf("%d invalid (%d with several anomalies, %d checked by brute force); the whole search went past the first component %d times; %d not compared (it met an unknown)", invalid, multi, brute, second, undecided)
			})
		}
	}
}

// tinyUnion is the union of k random tiny histories, each on keys and
// sessions of its own (prefixed), its times shifted by a random offset
// so that the parts interleave.
func tinyUnion(rng *rand.Rand, cfg oracle.TinyConfig, k int) *history.History {
	out := &history.History{}
	for part := range k {
		h := oracle.RandomTiny(rng, cfg)
		pre := fmt.Sprintf("p%d.", part)
		shift := int64(rng.IntN(40))
		for _, tx := range h.Txns {
			tx.ID = pre + tx.ID
			if tx.HasSession {
				tx.Session = pre + tx.Session
			}
			tx.Start += shift
			tx.End += shift
			ops := make([]history.Op, len(tx.Ops))
			for j, op := range tx.Ops {
				op.Key = history.Key(pre) + op.Key
				ops[j] = op
			}
			tx.Ops = ops
			out.Txns = append(out.Txns, tx)
		}
	}
	return out
}

// wholeSearchCores is checkWeakPrepared's canonical loop with the search
// over the whole instance: each anomaly's core (IDs, sorted). second
// counts the cores found outside the component of the shrink's core.
func wholeSearchCores(ctx context.Context, h *history.History, opts history.Options, maxA int) (cores [][]string, second int, unk bool) {
	p := prepare(h, opts)
	p.rtReads = true
	out, err := decideWeak(ctx, p)
	if err != nil || out.verdict != Invalid {
		return nil, 0, out.verdict == Unknown
	}
	curP := p
	var st Stats
	for len(cores) < maxA {
		core, err := shrinkWeak(ctx, curP, out.members, &st)
		if err != nil || core == nil {
			break
		}
		comp := weakComponents(curP)
		whole, err := canonicalCoreWhole(ctx, curP, core, &st, &unk)
		if err != nil {
			break
		}
		if comp[whole[0]] != comp[core[0]] {
			second++
		}
		ids := make([]string, 0, len(whole))
		in := make([]bool, len(curP.h.Txns))
		for i := range in {
			in[i] = true
		}
		for _, t := range whole {
			ids = append(ids, curP.h.Txns[t].ID)
			in[t] = false
		}
		slices.Sort(ids)
		cores = append(cores, ids)
		curP = prepareLike(curP, curP.project(in))
		if out, err = decideWeak(ctx, curP); err != nil || out.verdict != Invalid {
			unk = unk || out.verdict == Unknown
			break
		}
	}
	return cores, second, unk
}

// leastViolating is the canonical core by its definition: of every
// violating subset of h (under the online projection), the least when
// two are compared by the greatest member, in content order, in which
// they differ. IDs, sorted.
func leastViolating(ctx context.Context, h *history.History, opts history.Options) []string {
	p := prepare(h, opts)
	p.rtReads = true
	n := len(h.Txns)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := contentCompare(&h.Txns[a], &h.Txns[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// A subset as a bit mask over content ranks: comparing two by their
	// greatest differing member is comparing the masks as numbers.
	in := make([]bool, n)
	for mask := uint32(1); mask < 1<<n; mask++ {
		for r := range n {
			in[order[r]] = mask&(1<<r) != 0
		}
		if violatesWeak(ctx, p, in) {
			var ids []string
			for r := range n {
				if mask&(1<<r) != 0 {
					ids = append(ids, h.Txns[order[r]].ID)
				}
			}
			slices.Sort(ids)
			return ids
		}
	}
	return nil
}

// TestCanonicalCoreLinkedBySession: a core whose keys fall apart into
// two groups joined only by sessions. Session s1 runs A (reads x=2) then
// B (writes y=1); s2 runs C (reads y=1) then D (writes x=2): A →so B →wr
// C →so D →wr A, a cycle read atomic and causal forbid (read committed
// has no session order: valid there). E, begun last, reads x=null after
// writing x=5 itself: an internal anomaly, the first the decision meets.
// The canonical core is {A, B, C, D} (its greatest member comes before
// E); the search must find it from E's core, through E's component,
// which holds A and D by key x and B and C only by the sessions.
func TestCanonicalCoreLinkedBySession(t *testing.T) {
	r := func(k, v string) history.Op {
		return history.Op{Kind: history.Read, Key: history.Key(k), Value: history.Value(v)}
	}
	w := func(k, v string) history.Op {
		return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
	}
	tx := func(id, sess string, start, end int64, ops ...history.Op) history.Txn {
		return history.Txn{ID: id, Session: sess, HasSession: true, Start: start, End: end, HasTime: true, Status: history.Committed, Ops: ops}
	}
	h := &history.History{Txns: []history.Txn{
		tx("A", "s1", 10, 100, r("x", "2")),
		tx("C", "s2", 11, 100, r("y", "1")),
		tx("B", "s1", 20, 100, w("y", "1")),
		tx("D", "s2", 21, 100, w("x", "2")),
		tx("E", "s3", 200, 210, w("x", "5"), r("x", "null")),
	}}
	ctx := context.Background()
	for _, lv := range weakLevels {
		opts := history.DefaultOptions()
		opts.Level = lv
		res, err := CheckWeakOnline(ctx, h, opts, Config{MaxAnomalies: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"A", "B", "C", "D"}
		if lv == history.ReadCommitted {
			want = []string{"E"}
		}
		if res.Verdict != Invalid || len(res.Anomalies) != 1 {
			t.Fatalf("%s: %v with %d anomalies", lv, res.Verdict, len(res.Anomalies))
		}
		got := slices.Clone(res.Anomalies[0].Core)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: core %v, want %v", lv, got, want)
		}
		if whole, _, _ := wholeSearchCores(ctx, h, opts, 1); !slices.EqualFunc(whole, [][]string{want}, slices.Equal) {
			t.Errorf("%s: the whole search's core %v, want %v", lv, whole, want)
		}
	}
}

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
				var invalid, multi, brute, second int
				for i := 0; i < n; i++ {
					h := tinyUnion(rng, cfg, 1+rng.IntN(4))
					if h.Validate() != nil {
						continue
					}
					res, err := CheckWeakOnline(ctx, h, opts, Config{MaxAnomalies: 4}, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, st := wholeSearchCores(ctx, h, opts, 4)
					second += st
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
				t.Logf("%d invalid (%d with several anomalies, %d checked by brute force); the whole search went past the first component %d times", invalid, multi, brute, second)
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
func wholeSearchCores(ctx context.Context, h *history.History, opts history.Options, maxA int) ([][]string, int) {
	p := prepare(h, opts)
	p.rtReads = true
	out, err := decideWeak(ctx, p)
	if err != nil || out.verdict != Invalid {
		return nil, 0
	}
	var cores [][]string
	second := 0
	curP := p
	var st Stats
	for len(cores) < maxA {
		core, err := shrinkWeak(ctx, curP, out.members, &st)
		if err != nil || core == nil {
			break
		}
		comp := weakComponents(curP)
		whole, err := canonicalCoreWhole(ctx, curP, core, &st)
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
			break
		}
	}
	return cores, second
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

// canonicalCoreWhole turns core, a minimal core of p's history, into the
// canonical core of the history (docs/SEMANTICS.md §5 "Canonical cores
// at the weak levels"): with the transactions in content order
// (contentCompare: start, end, id, then the body), the violating subset
// that is least when sets are compared by their greatest differing
// member, the one deleting members latest first from the whole history
// leaves. It depends only on which transactions the history holds and
// what they say, never on the violating set the decision happened to
// report, so a writer retired (in no minimal core, R3) or kept, an
// arrival order or a batch size that changes that set leaves it alone.
//
// Violation is monotone in the set projected to (a read is kept only
// when all its possible writers are in, and a consistent commit order of
// a set orders every subset), so the canonical core's greatest member is
// the last x in content order whose prefix up to x, with the members
// already found above it, violates; a search downward from the greatest
// member of core (the canonical core is no greater) finds each, a
// doubling step and then bisection, some log₂(distance) projections
// each. A last deletion pass over the result keeps it minimal even were
// monotonicity ever to fail.
func canonicalCoreWhole(ctx context.Context, p *prepared, core []int32, st *Stats) ([]int32, error) {
	h := p.h
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
	rank := make([]int, n)
	for r, t := range order {
		rank[t] = r
	}
	// hi: order[:hi] together with fixed violates; fixed's members all
	// rank at or above hi.
	hi := 0
	for _, t := range core {
		hi = max(hi, rank[t]+1)
	}
	var fixed []int32
	in := make([]bool, n)
	violates := func(k int) bool {
		clear(in)
		for _, t := range order[:k] {
			in[t] = true
		}
		for _, t := range fixed {
			in[t] = true
		}
		st.CoreChecks++
		return violatesWeak(ctx, p, in)
	}
	// guess: core's members by rank, greatest first; while fixed is
	// core's members above hi (agree), the next member is most often
	// core's next one, g: order[:rank(g)+1] ∪ fixed holds core and
	// violates, and one check of order[:rank(g)] ∪ fixed confirms g.
	guess := slices.Clone(core)
	slices.SortFunc(guess, func(a, b int32) int { return cmp.Compare(rank[b], rank[a]) })
	agree := true
	verified := false // fixed's last violation was seen, not inferred
	for hi > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The least k with order[:k] ∪ fixed violating: order[k-1] is the
		// next member.
		ok, bad := hi, -1 // order[:ok] violates; order[:bad] does not (-1: not yet known)
		okSeen := verified
		if agree {
			for len(guess) > 0 && rank[guess[0]] >= hi {
				guess = guess[1:]
			}
			if len(guess) > 0 {
				g := rank[guess[0]]
				if violates(g) {
					ok, okSeen = g, true
				} else {
					ok, bad, okSeen = g+1, g, false // core ⊆ order[:g+1] ∪ fixed
				}
			}
		}
		// Step down from ok by doubling distances until a prefix no
		// longer violates, then bisect.
		for d := 1; bad < 0; d *= 2 {
			k := max(ok-d, 0)
			if violates(k) {
				ok, okSeen = k, true
				if k == 0 {
					break
				}
			} else {
				bad = k
			}
		}
		if bad < 0 {
			hi, verified = 0, true // fixed alone violates
			break
		}
		for ok-bad > 1 {
			mid := bad + (ok-bad)/2
			if violates(mid) {
				ok, okSeen = mid, true
			} else {
				bad = mid
			}
		}
		agree = agree && len(guess) > 0 && order[ok-1] == guess[0]
		fixed = append(fixed, order[ok-1])
		hi, verified = ok-1, okSeen && ok-1 == 0
	}
	if !verified && !violates(0) {
		// Monotonicity failed (it cannot, as argued above): the core
		// given is a core.
		return core, nil
	}
	// fixed is in decreasing content order; the deletion pass goes
	// latest first.
	clear(in)
	for _, t := range fixed {
		in[t] = true
	}
	for _, t := range fixed {
		in[t] = false
		st.CoreChecks++
		if !violatesWeak(ctx, p, in) {
			in[t] = true
		}
	}
	out := make([]int32, 0, len(fixed))
	for t, ok := range in {
		if ok {
			out = append(out, int32(t))
		}
	}
	return out, nil
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
		if whole, _ := wholeSearchCores(ctx, h, opts, 1); !slices.EqualFunc(whole, [][]string{want}, slices.Equal) {
			t.Errorf("%s: the whole search's core %v, want %v", lv, whole, want)
		}
	}
}

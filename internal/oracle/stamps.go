package oracle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// The oracle with the database's facts (docs/SEMANTICS.md §10), by
// definition and by brute force, sharing no code with stampcheck:
//
//   - commit stamps, at the serializable levels: the serial order puts a
//     before b whenever both are committed and commit_ts(a) <
//     commit_ts(b) (extra predecessors in the enumeration);
//   - PostgreSQL's facts, used when every committed transaction has an
//     xid and a snapshot and no unknown transaction writes: for committed
//     T and W != T where W writes a key T reads or writes, W comes before
//     T iff T's snapshot sees W's xid;
//   - snapshot isolation (SnapshotStamps): each read against the naive
//     visible set, pair by pair.

// usesPGFacts mirrors the rule of §10: commit stamps win; PostgreSQL's
// facts count only when complete.
func usesPGFacts(h *history.History) (use bool, stamps bool) {
	if h.Facts == nil {
		return false, false
	}
	for i := range h.Facts {
		if h.Facts[i].Has&history.HasCommitTS != 0 {
			return false, true
		}
	}
	for i := range h.Txns {
		t, f := &h.Txns[i], &h.Facts[i]
		switch {
		case t.Status == history.Unknown && t.Writes():
			return false, false
		case t.Status == history.Committed && f.Has&(history.HasXid|history.HasSnapshot) != history.HasXid|history.HasSnapshot:
			return false, false
		}
	}
	return true, false
}

// touches lists the keys t reads or writes.
func touches(t *history.Txn) map[history.Key]bool {
	m := map[history.Key]bool{}
	for _, op := range t.Ops {
		m[op.Key] = true
	}
	return m
}

func writesKey(t *history.Txn, k history.Key) bool {
	for _, op := range t.Ops {
		if op.Kind != history.Read && op.Key == k {
			return true
		}
	}
	return false
}

// CheckStamps is Check with the facts as extra constraints: valid iff
// some serial order of the level also keeps the facts.
func CheckStamps(h *history.History, opts history.Options) (bool, []string, error) {
	if err := checkInput(h, opts); err != nil {
		return false, nil, err
	}
	s := newSearch(h, opts)
	if len(s.cand) > MaxTxns {
		return false, nil, fmt.Errorf("%w: %d candidate transactions (max %d)", ErrTooLarge, len(s.cand), MaxTxns)
	}
	pg, stamps := usesPGFacts(h)
	for a := range s.cand {
		for b := range s.cand {
			ia, ib := s.cand[a].idx, s.cand[b].idx
			ta, tb := &h.Txns[ia], &h.Txns[ib]
			if a == b || ta.Status != history.Committed || tb.Status != history.Committed {
				continue
			}
			fa, fb := h.Facts[ia], h.Facts[ib]
			switch {
			case stamps:
				if fa.Has&fb.Has&history.HasCommitTS != 0 && fa.CommitTS < fb.CommitTS {
					s.cand[b].preds |= 1 << a
				}
			case pg:
				// a writes a key b touches: a before b iff b sees a.
				for k := range touches(tb) {
					if !writesKey(ta, k) {
						continue
					}
					if fb.Snap.Sees(fa.Xid) {
						s.cand[b].preds |= 1 << a
					} else {
						s.cand[a].preds |= 1 << b
					}
				}
			}
		}
	}
	order, ok := s.run()
	if !ok {
		return false, nil, nil
	}
	w := make([]string, len(order))
	for i, c := range order {
		w[i] = h.Txns[s.cand[c].idx].ID
	}
	return true, w, nil
}

// ProjectFacts is Project keeping the members' facts.
func ProjectFacts(h *history.History, opts history.Options, core []string) *history.History {
	p := Project(h, opts, core)
	if h.Facts == nil {
		return p
	}
	at := map[string]int{}
	for i := range h.Txns {
		at[h.Txns[i].ID] = i
	}
	p.Facts = make([]history.Facts, len(p.Txns))
	for i := range p.Txns {
		p.Facts[i] = h.Facts[at[p.Txns[i].ID]]
	}
	return p
}

// CheckStampsCore reports whether core is a minimal set whose facts
// contradict its reads at a serializable level: H|C is not valid with its
// facts, and every H|(C\{t}) is.
func CheckStampsCore(h *history.History, opts history.Options, core []string, valid func(*history.History) (bool, error)) error {
	ok, err := valid(ProjectFacts(h, opts, core))
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("H|%v is valid with its facts", core)
	}
	for i := range core {
		rest := slices.Delete(slices.Clone(core), i, i+1)
		ok, err := valid(ProjectFacts(h, opts, rest))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not minimal: H|%v is still inconsistent", rest)
		}
	}
	return nil
}

// SnapshotStamps decides snapshot isolation with the facts by the
// definition, pair by pair: every committed transaction with full facts
// (commit_ts and start_ts, or xid and snapshot; decided reports false
// otherwise) reads, for each key
// it has not written, the version of the writer its snapshot sees that
// every other seen writer's snapshot sees... (the latest); every seen
// writer's own seen writers of that key are seen too; two committed
// writers of a key are ordered by their snapshots one way exactly;
// session and real-time orders, when asked, put the earlier transaction
// in the later one's snapshot. Unknown transactions are taken as not
// committed; when one writes, only a valid answer is decided (it may have
// committed and explained a read).
func SnapshotStamps(h *history.History, opts history.Options, session, realTime bool) (valid, decided bool) {
	if h.Facts == nil {
		return false, false
	}
	pg := false
	for i := range h.Facts {
		pg = pg || h.Facts[i].Has&history.HasSnapshot != 0
		if h.Facts[i].Has&history.HasCommitTS != 0 {
			pg = false
			break
		}
	}
	unknown := false // an unknown transaction writes: tried as not committed
	var com []int
	for i := range h.Txns {
		t, f := &h.Txns[i], &h.Facts[i]
		if t.Status == history.Unknown && t.Writes() {
			unknown = true
		}
		if t.Status != history.Committed {
			continue
		}
		if !pg && f.Has&(history.HasCommitTS|history.HasStartTS) != history.HasCommitTS|history.HasStartTS ||
			pg && f.Has&(history.HasXid|history.HasSnapshot) != history.HasXid|history.HasSnapshot {
			return false, false
		}
		com = append(com, i)
	}
	if len(com) == 0 {
		return true, true
	}
	if pg && realTime {
		return false, false
	}
	sees := func(t, w int) bool {
		if t == w {
			return false
		}
		if pg {
			return h.Facts[t].Snap.Sees(h.Facts[w].Xid)
		}
		return h.Facts[w].CommitTS < h.Facts[t].StartTS
	}
	for _, a := range com {
		for _, b := range com {
			if a == b {
				continue
			}
			for k := range touches(&h.Txns[a]) {
				if writesKey(&h.Txns[a], k) && writesKey(&h.Txns[b], k) && sees(a, b) == sees(b, a) {
					return false, true
				}
			}
			if session && h.Txns[a].HasSession && h.Txns[b].HasSession && h.Txns[a].Session == h.Txns[b].Session {
				rank := sessionRanks(h)
				if rank[a] < rank[b] && !sees(b, a) {
					return false, true
				}
			}
			if realTime && opts.Precedes(&h.Txns[a], &h.Txns[b]) && !sees(b, a) {
				return false, true
			}
		}
	}
	bad := false // an external read failed while an unknown transaction writes
	lists := h.ListKeys()
	unknownInit := opts.InitialState == history.InitialUnknown
	initReg := map[history.Key]history.Value{}
	initList := map[history.Key][]history.Value{}
	for _, t := range com {
		tx := &h.Txns[t]
		own := map[history.Key]history.Value{}
		ownList := map[history.Key][]history.Value{}
		for _, op := range tx.Ops {
			k := op.Key
			switch op.Kind {
			case history.Write:
				own[k] = op.Value
				continue
			case history.Append:
				ownList[k] = append(ownList[k], op.Value)
				continue
			}
			var seen []int
			for _, w := range com {
				if w != t && writesKey(&h.Txns[w], k) && sees(t, w) {
					seen = append(seen, w)
				}
			}
			// Closed under what the seen writers saw.
			for _, w := range seen {
				for _, v := range com {
					if v != t && v != w && writesKey(&h.Txns[v], k) && sees(w, v) && !sees(t, v) {
						if !unknown {
							return false, true
						}
						bad = true
						continue
					}
				}
			}
			// Version order among the seen: by how many of them each sees.
			sort.SliceStable(seen, func(x, y int) bool { return sees(seen[y], seen[x]) })
			if lists[k] {
				var tail []history.Value
				for _, w := range seen {
					for _, o := range h.Txns[w].Ops {
						if o.Kind == history.Append && o.Key == k {
							tail = append(tail, o.Value)
						}
					}
				}
				tail = append(tail, ownList[k]...)
				var got []history.Value
				if op.IsList {
					got = op.List
				} else if op.Value != history.Null {
					if !unknown {
						return false, true
					}
					bad = true
					continue
				}
				if !unknownInit {
					if !slices.Equal(got, tail) {
						if !unknown {
							return false, true
						}
						bad = true
						continue
					}
					continue
				}
				if len(got) < len(tail) || !slices.Equal(got[len(got)-len(tail):], tail) {
					if !unknown {
						return false, true
					}
					bad = true
					continue
				}
				init := got[:len(got)-len(tail)]
				if prev, ok := initList[k]; ok && !slices.Equal(prev, init) {
					if !unknown {
						return false, true
					}
					bad = true
					continue
				}
				initList[k] = slices.Clone(init)
				continue
			}
			if v, ok := own[k]; ok {
				if op.Value != v {
					return false, true // no other transaction explains it
				}
				continue
			}
			if len(seen) > 0 {
				w := seen[len(seen)-1]
				v := history.Null
				for _, o := range h.Txns[w].Ops {
					if o.Kind == history.Write && o.Key == k {
						v = o.Value
					}
				}
				if op.Value != v {
					if !unknown {
						return false, true
					}
					bad = true
					continue
				}
				continue
			}
			if !unknownInit {
				if op.Value != history.Null {
					if !unknown {
						return false, true
					}
					bad = true
					continue
				}
				continue
			}
			if prev, ok := initReg[k]; ok && prev != op.Value {
				if !unknown {
					return false, true
				}
				bad = true
				continue
			}
			initReg[k] = op.Value
		}
	}
	if bad {
		return false, false
	}
	return true, true
}

// StampKind says which facts RandomTinyStamps writes.
type StampKind uint8

const (
	CommitOnly  StampKind = iota // commit_ts
	CommitStart                  // commit_ts and start_ts
	PGSnapshots                  // xid and snapshot
)

// RandomTinyStamps is RandomTiny with the facts a database would have
// given for the simulated execution (commit_ts the commit point's rank,
// start_ts equal to it, which is what a read at the commit point sees;
// PostgreSQL snapshots seeing exactly the earlier commit points), then,
// with probability lie, one fact falsified: two commit stamps swapped,
// two tied, one dropped, a start_ts lowered, a snapshot's view of one xid
// flipped. Facts follow the final statuses (none on aborted
// transactions, no commit_ts on unknown ones), so the result validates.
func RandomTinyStamps(rng *rand.Rand, cfg TinyConfig, kind StampKind, lie float64) *history.History {
	g := &tinyGen{rng: rng, cfg: cfg}
	g.plan()
	g.execute()
	for range cfg.MaxMutations {
		if rng.Float64() < cfg.Mutate {
			g.mutate()
		}
	}
	h := g.h
	n := len(h.Txns)
	rank := make([]int64, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return g.cp[idx[a]] < g.cp[idx[b]] })
	for r, i := range idx {
		rank[i] = int64(2 * (r + 1))
	}
	seeSet := make([][]bool, n) // seeSet[t][w]
	for t := range seeSet {
		seeSet[t] = make([]bool, n)
		for w := range seeSet[t] {
			seeSet[t][w] = w != t && rank[w] < rank[t]
		}
	}
	start := slices.Clone(rank)
	if rng.Float64() < lie && n >= 2 {
		a, b := rng.IntN(n), rng.IntN(n)
		switch rng.IntN(4) {
		case 0:
			rank[a], rank[b] = rank[b], rank[a]
			start[a], start[b] = rank[a], rank[b]
		case 1:
			rank[a] = rank[b]
			start[a] = min(start[a], rank[a])
		case 2:
			start[a] -= int64(2 * rng.IntN(n))
		case 3:
			if a != b {
				seeSet[a][b] = !seeSet[a][b]
			}
		}
	}
	drop := -1
	if kind != PGSnapshots && rng.Float64() < lie/2 {
		drop = rng.IntN(n)
	}
	h.Facts = make([]history.Facts, n)
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status == history.Aborted || i == drop {
			continue
		}
		f := &h.Facts[i]
		switch kind {
		case CommitOnly, CommitStart:
			if t.Status == history.Committed {
				f.CommitTS, f.Has = rank[i], history.HasCommitTS
			}
			if kind == CommitStart {
				f.StartTS, f.Has = max(0, start[i]-1), f.Has|history.HasStartTS
				if t.Status == history.Committed && f.StartTS > f.CommitTS {
					f.StartTS = f.CommitTS
				}
			}
		case PGSnapshots:
			snap := &history.Snapshot{Xmax: uint64(n + 1)}
			for w := range n {
				if !seeSet[i][w] {
					snap.Xip = append(snap.Xip, uint64(w+1))
				}
			}
			snap.Xmin = snap.Xmax
			if len(snap.Xip) > 0 {
				snap.Xmin = snap.Xip[0]
			}
			f.Xid, f.Snap, f.Has = uint64(i+1), snap, history.HasXid|history.HasSnapshot
		}
	}
	return h
}

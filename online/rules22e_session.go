package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// R5 through the session's last predecessor (docs/SEMANTICS.md §5, "R5
// through a session's last predecessor"; issue 20, item 7).
//
// When a committed t leaves, R5 keeps a -> b for each predecessor a and
// successor b of t. Among the predecessors are the members of t's
// session ranked before t that commit and that real time does not order
// before t. All of them are in one session and commit, so each reaches
// the highest-ranked of them, L, by session order, in every completion
// and in every later instance that holds both (the encoding's session
// chain, incremental I1: the order out of a member holds when it
// commits, and the chain does not pass through t, ranked after L). So
// once L -> b is kept (or implied) for every b, a -> b adds nothing to
// the instance's reachability: only L goes with the predecessors. On a
// burst every session's unknowns decided committed stay members (their
// effective end is the in-doubt horizon) and were each a predecessor of
// every later removal in their session: the pairs, keepAfter's visits
// and the session visit grew with the session's length.
//
// sessionLastPred finds L going down from t: the unsettled members
// (unknowns whose commit is a literal) by the step's per-session list,
// skipping for the rest of the step those removed or decided not to
// commit (both only get set within a step), and the settled ones by the
// settled bound (sessionIdx.settledAllBefore), no lower than the
// unsettled candidate. L is the higher-ranked of the two.

// sessionPredsAll (tests) keeps every session predecessor, as R5 did
// before the rule: the reference the rule is compared with.
var sessionPredsAll bool

// sessionLastPredMode (tests) breaks the rule on purpose: 1 takes the
// highest-ranked earlier member whatever its commit, 2 the lowest-ranked
// predecessor instead of the highest.
var sessionLastPredMode int

func (s *evictStep) sessionLastPred(t, ss int32, preds, succs []int32) ([]int32, []int32) {
	p := s.p
	ix := s.sessionIndex()
	ms := p.SessionMembers()[ss]
	rank := p.SessionRank()[t]
	if sessionLastPredMode != 0 {
		return s.sessionLastPredBroken(t, ss, preds, succs)
	}
	// The unsettled candidate: the highest-ranked unsettled member
	// before t, not removed, that commits and that real time does not
	// order before t.
	uns := ix.unsettled[ss]
	if ix.skip == nil {
		ix.skip = make([][]int32, len(ix.unsettled))
	}
	skip := ix.skip[ss]
	if skip == nil && len(uns) > 0 {
		skip = make([]int32, len(uns))
		for j := range skip {
			skip[j] = int32(j)
		}
		ix.skip[ss] = skip
	}
	j := int32(sortSearchRank(p, uns, rank)) - 1
	cand := int32(-1)
	first := int32(-1) // the first index of a run of dead entries
	for j >= 0 {
		if skip[j] != j {
			if first < 0 {
				first = j
			}
			j = skip[j]
			continue
		}
		u := uns[j]
		dead := s.removed[u]
		var c, ok bool
		if !dead {
			c, ok = s.commitOfLit(u)
			dead = ok && !c
		}
		if dead {
			if first < 0 {
				first = j
			}
			skip[j] = j - 1
			j--
			continue
		}
		// A live entry: the run of dead entries above it jumps here.
		if first >= 0 {
			for k := first; k > j; {
				next := skip[k]
				skip[k] = j
				k = next
			}
			first = -1
		}
		if c && !p.RealTimeBefore(u, t) {
			cand = u
			break
		}
		j--
	}
	if first >= 0 {
		for k := first; k > j; {
			next := skip[k]
			skip[k] = j
			k = next
		}
	}
	// The settled candidate, above the unsettled one.
	floor := int32(-1)
	if cand >= 0 {
		floor = p.SessionRank()[cand]
	}
	// The walk down skips the ranks found dead for it earlier in the
	// step (burst30_down.go).
	down := s.sessionDown(ss, len(ms))
	for k := down.find(rank - 1); k > floor; k = down.find(k - 1) {
		u := ms[k]
		if ix.settledAllBefore(p, u, t) {
			break
		}
		if !ix.settled[u] || s.removed[u] || u == t {
			if u != t {
				down.kill(k)
			}
			continue
		}
		c, _ := s.commitOf(u)
		if c && !p.RealTimeBefore(u, t) {
			cand = u
			if sessionDownBroken {
				down.kill(k)
			}
			break
		}
		if !c {
			down.kill(k)
		}
	}
	if cand >= 0 {
		preds = append(preds, cand)
	}
	if sessionNeighboursCheck != nil {
		want, unknownBefore := s.sessionNeighboursPure(t, ss)
		sessionNeighboursCheck(want, preds[len(preds)-min(len(preds), len(want), 1):], unknownBefore)
	}
	return preds, s.sessionSuccs(t, ss, succs)
}

// sortSearchRank is the number of members of us (in rank order) ranked
// before rank.
func sortSearchRank(p interface{ SessionRank() []int32 }, us []int32, rank int32) int {
	n, _ := slices.BinarySearchFunc(us, rank, func(u, r int32) int {
		if p.SessionRank()[u] < r {
			return -1
		}
		return 1
	})
	return n
}

// sessionLastPredBroken is the rule broken as sessionLastPredMode says
// (tests: the mutations the regression tests must catch).
func (s *evictStep) sessionLastPredBroken(t, ss int32, preds, succs []int32) ([]int32, []int32) {
	p := s.p
	ms := p.SessionMembers()[ss]
	var all []int32
	for _, u := range ms[:p.SessionRank()[t]] {
		if s.removed[u] {
			continue
		}
		c, _ := s.commitOf(u)
		if sessionLastPredMode == 1 && !p.RealTimeBefore(u, t) || c && !p.RealTimeBefore(u, t) {
			all = append(all, u)
		}
	}
	switch {
	case len(all) == 0:
	case sessionLastPredMode == 2:
		preds = append(preds, all[0])
	default:
		preds = append(preds, all[len(all)-1])
	}
	return preds, s.sessionSuccs(t, ss, succs)
}

// The successors' side of the rule (docs/SEMANTICS.md §5, "R5 through
// a session's first sure successor"): of t's session successors that
// real time does not order after t, listed in rank order, those after
// the first one that commits for sure, F, are reached from F by session
// order, so the predecessors need an order to F and to those before it
// only.

// sessionSuccsAll (tests) keeps every session successor, as R5 did
// before the rule.
var sessionSuccsAll bool

// sessionFirstSureBroken (tests) breaks the rule on purpose: F is the
// first successor whatever its commit.
var sessionFirstSureBroken bool

// sessionFirstSure cuts succs[from:] (t's session successors, in rank
// order) after the first one that commits for sure. It asks no probe.
func (s *evictStep) sessionFirstSure(succs []int32, from int) []int32 {
	if sessionSuccsAll {
		return succs
	}
	for k := from; k < len(succs); k++ {
		if sessionFirstSureBroken || s.commitsForSure(succs[k]) {
			return succs[:k+1]
		}
	}
	return succs
}

// commitsForSure: u commits in every completion of this instance and of
// every later one that holds it: committed, or an unknown whose commit
// is fixed true at level 0 (keepFacts keeps it as a decision).
func (s *evictStep) commitsForSure(u int32) bool {
	r, p := s.r, s.p
	switch {
	case r.pos[u] < 0:
		return true
	case p.Txns()[u].Dropped() || r.h.Txns[u].Status == history.Aborted:
		return false
	}
	v, ok := fixedLit(s.e.Solver(), s.e.Act()[u])
	return ok && v
}

package online

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
)

// Build by touched keys (docs/SEMANTICS.md §5 "Build by touched keys").
//
// A step's instance holds every window member and only the ghosts a
// member can meet: a ghost holding a key some member touches, a ghost
// named by a kept order, and a ghost that a kept order reaches through
// real time (keptCover). build found them by a pass over every member,
// ghosts included: with one ghost per key whose live version left (20K on
// a recording over 20K keys), that pass was half of the CPU of a step
// whose window held a hundred transactions. ghostIndex finds the same
// ghosts from the window's side:
//
//   - GX1 byKey[k] is the set of ghosts g with k in GhostKeys[g]. Several
//     ghosts may hold one key (an overtaken writer keeps its key beside
//     the live version, R4's keepPrev), so LiveOf is not enough. Each
//     entry carries what keyFate reads of g's body (ghostRef), so that
//     judging a (key, ghost) pair reads no body.
//   - GX2 byStart holds (start, g) for every ghost g with trusted times,
//     sorted; an entry whose g is no longer a ghost may stay (lazy
//     deletion, dropped when stale entries are half of the list), so a
//     reader checks GhostKeys. keptCover's time ranges are binary
//     searches in it.
//   - GX3 the window list is every member that is not a ghost, in
//     released order, with stale entries dropped lazily as memberList
//     does: a member that becomes a ghost or leaves never comes back to
//     the window but through admit (or a new state, which rebuilds).
//
// The index is derived (none of it in a snapshot or a rewind point):
// built from GhostKeys at the first build of a state, then kept at every
// site that changes GhostKeys (setGhostKeys, ghostDropKey, ghostGone).
// selfCheck holds it to a rebuild from scratch after every step, and the
// ghosts build picks to the pass over every member it replaces.
type ghostIndex struct {
	built   bool
	byKey   map[history.Key][]ghostRef
	byStart []ghostAt
	stale   int
	// win is GX3's list; winListed says whether it is built.
	win       []int
	winListed bool
	// inst is build's scratch: the instance's members in released order.
	inst []int
}

// ghostRef is a byKey[k] entry: ghost g, and what the fused bypass
// (keyFate, foldable) reads of g's body for k, taken when the entry is
// made. A ghost's body does not change while it is a ghost (it stays in
// memory, stub leaves members alone, and a stub keeps the times and the
// status), so the copy is the body's (pg32_ghostref.go).
type ghostRef struct {
	g int
	// end is g's end when g is committed with a time, else math.MaxInt64
	// (keyFate keeps it either way).
	end int64
	// val is g's final write of the key, wrote whether it has one.
	val   history.Value
	wrote bool
}

// refOf is byKey's entry for ghost g's key k, t g's body.
func (o *Online) refOf(g int, t *history.Txn, k history.Key) ghostRef {
	r := ghostRef{g: g, end: math.MaxInt64}
	if t.Status == history.Committed && t.HasTime {
		r.end = t.End
	}
	r.val, r.wrote = o.finalWrite(t, k)
	return r
}

// ghostAt is a byStart entry.
type ghostAt struct {
	start int64
	i     int
}

func cmpGhostAt(a, b ghostAt) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.i, b.i)
}

// selfCheck turns on the debug checks of the derived indexes after every
// step (tests; SetSelfCheck). Off in production: each check is a pass
// over the whole state.
var selfCheck atomic.Bool

// SetSelfCheck turns the engine's debug checks on or off for every
// engine of the process and returns the previous setting: after every
// step the ghost index is compared with a rebuild from scratch, and the
// ghosts each build picks with a pass over every member, and a reduced
// instance whose violation the bodies do not confirm (a disagreement,
// otherwise counted and healed) stops the step. A failed check is a
// step error. For the differential tests; it costs a pass over the
// state per step.
func SetSelfCheck(on bool) bool { return selfCheck.Swap(on) }

// quietDisagree (tests) keeps a disagreement a count under the
// self-checks: the tests that run a naive rule to see it disagree
// (sweepQuiet, burstQuiet) count them instead.
var quietDisagree bool

// ghostIdx returns the state's ghost index, built from GhostKeys if it
// is not yet.
func (o *Online) ghostIdx() *ghostIndex {
	gx := &o.ev.gx
	if !gx.built {
		o.rebuildGhostIndex(gx)
	}
	return gx
}

// rebuildGhostIndex builds GX1 and GX2 from GhostKeys.
func (o *Online) rebuildGhostIndex(gx *ghostIndex) {
	st := &o.ev
	gx.byKey = make(map[history.Key][]ghostRef, len(st.GhostKeys))
	gx.byStart = gx.byStart[:0]
	for g, keys := range st.GhostKeys {
		t := o.log.at(g)
		for _, k := range keys {
			gx.byKey[k] = append(gx.byKey[k], o.refOf(g, t, k))
		}
		if t.HasTime {
			gx.byStart = append(gx.byStart, ghostAt{t.Start, g})
		}
	}
	slices.SortFunc(gx.byStart, cmpGhostAt)
	gx.stale = 0
	gx.built = true
}

// setGhostKeys makes member i a ghost of keys (GhostKeys[i] = keys),
// keeping the index.
func (o *Online) setGhostKeys(i int, keys []history.Key) {
	st := &o.ev
	gx := &st.gx
	if gx.built {
		if old, was := st.GhostKeys[i]; was {
			for _, k := range old {
				gx.unKey(k, i)
			}
		}
		t := o.log.at(i)
		for _, k := range keys {
			gx.byKey[k] = append(gx.byKey[k], o.refOf(i, t, k))
		}
		if t.HasTime {
			e := ghostAt{t.Start, i}
			// New ghosts are recent members: mostly an append.
			if at, found := slices.BinarySearchFunc(gx.byStart, e, cmpGhostAt); !found {
				gx.byStart = slices.Insert(gx.byStart, at, e)
			}
		}
	}
	st.GhostKeys[i] = keys
}

// ghostDropKey keeps the index once ghost g no longer holds k.
func (st *evictState) ghostDropKey(g int, k history.Key) {
	if st.gx.built {
		st.gx.unKey(k, g)
	}
}

// ghostGone keeps the index before i leaves GhostKeys (delete): the keys
// it still holds leave byKey, its byStart entry goes stale. Its ops built
// for the instance (ghostOps, a cache) go too: left to registerGhostOps'
// sweep at twice the ghosts, they were the largest table of the live
// heap still growing after 10% of the PostgreSQL recording (0.4 MB at
// 110K, 3.1 MB at 824K; BENCHMARKS.md "pg30").
func (st *evictState) ghostGone(i int) {
	delete(st.ghostOps, i)
	gx := &st.gx
	keys, was := st.GhostKeys[i]
	if !gx.built || !was {
		return
	}
	for _, k := range keys {
		gx.unKey(k, i)
	}
	gx.stale++
}

// unKey takes g from byKey[k].
func (gx *ghostIndex) unKey(k history.Key, g int) {
	gs := slices.DeleteFunc(gx.byKey[k], func(x ghostRef) bool { return x.g == g })
	if len(gs) == 0 {
		delete(gx.byKey, k)
	} else {
		gx.byKey[k] = gs
	}
}

// compact drops byStart's stale entries once they are half of it
// (amortized, each entry is dropped once).
func (gx *ghostIndex) compact(st *evictState) {
	if gx.stale <= len(gx.byStart)/2+64 {
		return
	}
	gx.byStart = slices.DeleteFunc(gx.byStart, func(e ghostAt) bool { return st.GhostKeys[e.i] == nil })
	gx.stale = 0
}

// windowList returns the members that are not ghosts, in released order
// (GX3).
func (st *evictState) windowList() []int {
	gx := &st.gx
	if !gx.winListed {
		gx.win = gx.win[:0]
		for _, i := range st.memberList() {
			if st.GhostKeys[i] == nil {
				gx.win = append(gx.win, i)
			}
		}
		gx.winListed = true
		return gx.win
	}
	keep := gx.win[:0]
	for _, i := range gx.win {
		if st.Member.get(i) && st.GhostKeys[i] == nil {
			keep = append(keep, i)
		}
	}
	gx.win = keep
	return keep
}

// instanceGhosts returns the ghosts build puts in the instance, in
// released order: the members g with GhostKeys[g] set that hold a key of
// touched (GX1), are named by a kept order (keptAt) or are covered
// (keptCover: its predicate, over the byStart entries of its ranges).
func (o *Online) instanceGhosts(touched map[history.Key]bool, keptAt map[int]bool, cover keptCoverSet) []int {
	st := &o.ev
	gx := o.ghostIdx()
	gx.compact(st)
	o.kf.pairsOK = false // pg32_foldpairs.go: only this build's may serve
	if o.fusedBypass() {
		return o.instanceGhostsFused(touched, keptAt, cover) // pg31_bypasskeys.go
	}
	var out []int
	isGhost := func(g int) bool { return st.Member.get(g) && st.GhostKeys[g] != nil }
	for k := range touched {
		for _, h := range gx.byKey[k] {
			if st.Member.get(h.g) {
				out = append(out, h.g)
			}
		}
	}
	for g := range keptAt {
		if isGhost(g) {
			out = append(out, g)
		}
	}
	for _, rg := range cover.ranges {
		at, _ := slices.BinarySearchFunc(gx.byStart, ghostAt{rg[0], -1 << 62}, cmpGhostAt)
		for ; at < len(gx.byStart) && gx.byStart[at].start <= rg[1]; at++ {
			if g := gx.byStart[at].i; isGhost(g) && cover.covered(g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkGhostIndex compares the index with a rebuild from GhostKeys
// (selfCheck): GX1 exactly, GX2's live entries, GX3 with the members.
func (o *Online) checkGhostIndex() error {
	st := &o.ev
	gx := &st.gx
	if gx.built {
		var fresh ghostIndex
		o.rebuildGhostIndex(&fresh)
		if len(fresh.byKey) != len(gx.byKey) {
			return fmt.Errorf("engine self-check: ghost index holds %d keys, GhostKeys %d", len(gx.byKey), len(fresh.byKey))
		}
		byG := func(a, b ghostRef) int { return cmp.Compare(a.g, b.g) }
		for k, want := range fresh.byKey {
			got := slices.Clone(gx.byKey[k])
			slices.SortFunc(got, byG)
			slices.SortFunc(want, byG)
			if !slices.Equal(got, want) {
				return fmt.Errorf("engine self-check: ghost index has %v for key %q, GhostKeys %v", got, k, want)
			}
		}
		var live []ghostAt
		for j, e := range gx.byStart {
			if j > 0 && cmpGhostAt(gx.byStart[j-1], e) >= 0 {
				return fmt.Errorf("engine self-check: ghost index by start out of order at %d", j)
			}
			if st.GhostKeys[e.i] != nil {
				live = append(live, e)
			}
		}
		if !slices.Equal(live, fresh.byStart) {
			return fmt.Errorf("engine self-check: ghost index by start holds %d ghosts, GhostKeys %d", len(live), len(fresh.byStart))
		}
	}
	if gx.winListed {
		var want []int
		for _, i := range st.memberList() {
			if st.GhostKeys[i] == nil {
				want = append(want, i)
			}
		}
		if got := st.windowList(); !slices.Equal(got, want) {
			return fmt.Errorf("engine self-check: window list %v, members not ghosts %v", got, want)
		}
	}
	return nil
}

// mergeSorted appends the merge of ascending a and b (disjoint) to out.
func mergeSorted(out, a, b []int) []int {
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// buildCheck holds build's ghosts to the pass over every member it
// replaced (selfCheck): a ghost is in the instance when a member touches
// one of its keys, a kept order names it, or keptCover covers it. A
// difference panics: the instance of the step would not be the one the
// rules were argued on.
func (o *Online) buildCheck(window, ghosts []int, touched map[history.Key]bool, keptAt map[int]bool, cover keptCoverSet) {
	st := &o.ev
	var wantWin, wantGhosts []int
	for _, i := range st.memberList() {
		gk := st.GhostKeys[i]
		if gk == nil {
			wantWin = append(wantWin, i)
			continue
		}
		if keptAt[i] || slices.ContainsFunc(gk, func(k history.Key) bool { return touched[k] }) || cover.covered(i) {
			wantGhosts = append(wantGhosts, i)
		}
	}
	if !slices.Equal(window, wantWin) {
		panic(fmt.Sprintf("engine self-check: window %v, members not ghosts %v", window, wantWin))
	}
	if !slices.Equal(ghosts, wantGhosts) {
		panic(fmt.Sprintf("engine self-check: build picked ghosts %v, the pass over every member %v", ghosts, wantGhosts))
	}
	ghostBuildStats.picked.Add(int64(len(ghosts)))
	ghostBuildStats.all.Add(int64(len(st.GhostKeys)))
}

// ghostBuildStats count, under selfCheck, the ghosts builds picked and
// the ghosts there were: a test says with them that its streams left
// ghosts out of instances.
var ghostBuildStats struct{ picked, all atomic.Int64 }

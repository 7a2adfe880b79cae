package online

import (
	"cmp"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Ghosts a step's instance can do without (docs/SEMANTICS.md §5 "Ghosts
// that only precede").
//
// "Build by touched keys" puts in R_t every ghost holding a key that an
// op of R_t touches. On a recording of read-modify-write clients over
// many keys half of those are touched only by writes: a member overwrites
// the ghost's live version, and no op of R_t reads it. Such a ghost G is
// left out of R_t when
//
//	B1 G committed, with a time, holds no list key and no list tail, and
//	   no kept order names it or is covered through it (keptAt, keptCover);
//	B2 no op of R_t reads a key G holds;
//	B3 every member op writing a key G holds starts after G's effective
//	   end + 2Δ (G precedes the writer in real time);
//	B4 every transaction of R_t in G's session that starts no later than
//	   G ends, + 2Δ, before G starts (a session predecessor precedes G in
//	   real time).
//
// The completions of R_t without G are exactly the restrictions of those
// of R_t: so the instance is satisfiable iff R_t is, and an order or a
// choice among the others is decided in one iff in the other. G's edges
// in R_t are: in, from transactions before it in real time or (B4) its
// session predecessors, also before it in real time; no read-from, no
// anti-dependency (B2), no version order from another writer of its keys
// (a ghost holds a key alone, B3 puts every member writer after it), no
// kept order (B1); out, to transactions after it in real time, to its
// session successors, which start no earlier than it (sessions are in
// start order), and write-write to the member writers of its keys, after
// it in real time (B3). Every in-neighbour precedes in real time, without
// G, every out-neighbour (a real-time successor or a writer: by
// transitivity of real time; a session successor s: the in-neighbour
// ends 2Δ before G starts, and s starts no earlier), so a cycle through
// G shortens to one without it, and any acyclic completion of the rest
// takes G as a source of its successors: the restriction is onto. With
// several such ghosts, leave them out one at a time: B1-B4 only get
// easier as R_t loses transactions.
//
// Eviction never needed G: R4 asks whether a member writer follows the
// live version (B3: by real time), and a member that overwrites G's last
// key retires it as a ghost not built this step is retired (dropGhostKey).
// What G proved stays known through real time; only the kept orders a
// contraction through G would have added (p -> G -> s becomes p -> s)
// are not added, and each of them holds by real time (B3, B4).

// bypassKey is what build notes of a key a window member's instance ops
// touch: whether one reads it or treats it as a list, and the earliest
// start of a member writing it.
type bypassKey struct {
	read     bool
	minWrite int64
	// For the fold (live_fold.go): the value every register read of
	// the key reads (hasVal), mixed once a second value, a list op or
	// a reader without a time is met, and the earliest start of a
	// register reader.
	readVal history.Value
	hasVal  bool
	mixed   bool
	minRead int64
}

// noteBypass records window member i's op (kept in the instance) for
// bypassGhosts.
func (o *Online) noteBypass(i int, op *history.Op) {
	bk, ok := o.bypass[op.Key]
	if !ok {
		bk = bypassKey{minWrite: math.MaxInt64, minRead: math.MaxInt64}
	}
	if op.Kind != history.Write || op.IsList {
		bk.read = true
		t := o.log.at(i)
		switch {
		case op.Kind != history.Read || op.IsList || !t.HasTime:
			bk.mixed = true
		case !bk.hasVal:
			bk.readVal, bk.hasVal = op.Value, true
		case bk.readVal != op.Value:
			bk.mixed = true
		}
		if t.Start < bk.minRead {
			bk.minRead = t.Start
		}
	} else if s := o.log.at(i).Start; s < bk.minWrite {
		bk.minWrite = s
	}
	o.bypass[op.Key] = bk
}

// sessEntry is a transaction of the step's instance in a session: its
// start, its effective end, its released index; sessions sort them by
// start, and pm holds the largest effective end before each.
type sessEntry struct {
	start, end int64
	i          int
	// maxBefore is the largest end of the entries before this one.
	maxBefore int64
}

// bypassGhosts returns ghosts without those B1-B4 leave out of the
// step's instance (in place: ghosts is build's own list).
func (o *Online) bypassGhosts(window, ghosts []int, keptAt map[int]bool, cover keptCoverSet) []int {
	if o.noBypass || len(ghosts) == 0 || !o.opts.Level.RealTime() {
		return ghosts
	}
	skew2 := 2 * o.opts.Skew
	// B4: per session, the instance's transactions in it by start, with
	// the prefix maxima of their effective ends: one binary search per
	// ghost, not a pass over its session.
	// A session no transaction of the last step's instance was in leaves
	// the map: kept, the reset visited every session ever seen at every
	// step (the anomaly storm's fresh sessions, issue 22).
	sess := o.bypassSess
	for k, l := range sess {
		if len(l) == 0 {
			delete(sess, k)
		} else {
			sess[k] = l[:0]
		}
	}
	for _, list := range [][]int{window, ghosts} {
		for _, i := range list {
			if t := o.log.at(i); t.HasSession {
				start := int64(math.MinInt64) // no time: before everything, never ended
				end := int64(math.MaxInt64)
				if t.HasTime {
					start, end = t.Start, o.instanceEnd(i, t) // rmw31_sessend.go
				}
				sess[t.Session] = append(sess[t.Session], sessEntry{start: start, end: end, i: i})
			}
		}
	}
	for _, l := range sess {
		slices.SortFunc(l, func(a, b sessEntry) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
		m := int64(math.MinInt64)
		for j := range l {
			l[j].maxBefore = m
			m = max(m, l[j].end)
		}
	}
	fates := o.fatesFor(ghosts) // pg31_bypasskeys.go
	out := ghosts[:0]
	for j, g := range ghosts {
		keyFate := -1
		if fates != nil {
			keyFate = int(fates[j])
			if selfCheck.Load() {
				o.checkKeyFate(g, fates[j], skew2, keptAt, cover, sess)
			}
		}
		switch o.bypassableWith(g, skew2, keptAt, cover, sess, keyFate) {
		case ghostKept:
			out = append(out, g)
		case ghostBypassed:
			o.bypassed++
		case ghostFolded:
			o.foldNow = append(o.foldNow, g) // live_fold.go
			o.folded++
		}
	}
	return out
}

// What bypassable decides of a ghost: kept in the step's instance, left
// out (B1-B4), or folded into the initial node (F1-F3, live_fold.go).
const (
	ghostKept = iota
	ghostBypassed
	ghostFolded
)

// bypassable reports B1-B4 for ghost g (ghostBypassed), or, where only
// B2 fails, F1-F3 (ghostFolded, live_fold.go).
func (o *Online) bypassable(g int, skew2 int64, keptAt map[int]bool, cover keptCoverSet, sess map[string][]sessEntry) int {
	return o.bypassableWith(g, skew2, keptAt, cover, sess, -1)
}

// bypassableWith is bypassable with the key part of the verdict (B2, B3
// and F1-F3 over g's keys) given as keyFate when instanceGhosts judged
// it from the touched keys' side (pg31_bypasskeys.go), or -1: scan g's
// keys.
func (o *Online) bypassableWith(g int, skew2 int64, keptAt map[int]bool, cover keptCoverSet, sess map[string][]sessEntry, keyFate int) int {
	st := &o.ev
	t := o.log.at(g)
	if t.Status != history.Committed || !t.HasTime || st.Tail[g] != nil || keptAt[g] || cover.covered(g) {
		return ghostKept
	}
	end := o.opts.EffectiveEnd(t)
	if end == math.MaxInt64 || end > math.MaxInt64-skew2-1 {
		return ghostKept
	}
	fate := ghostBypassed
	var scan []history.Key // the keys judged here
	if keyFate >= 0 {
		if keyFate == ghostKept {
			return ghostKept
		}
		fate = keyFate
	} else {
		scan = st.GhostKeys[g]
	}
	for _, k := range scan {
		if _, l := st.ListPrefix[k]; l {
			return ghostKept
		}
		bk, ok := o.bypass[k]
		if !ok {
			continue // no op of the instance touches k
		}
		if bk.minWrite <= end+skew2 {
			return ghostKept
		}
		if bk.read {
			if !o.foldable(g, k, &bk, end+skew2) { // live_fold.go
				return ghostKept
			}
			fate = ghostFolded
		}
	}
	if t.HasSession {
		// The others starting no later than g: those before it in the
		// sorted list, and those after it with the same start. One of
		// the latter ends after g starts (it ends no earlier than it
		// starts), so B4 fails with it.
		l := sess[t.Session]
		p, found := slices.BinarySearchFunc(l, sessEntry{start: t.Start, i: g}, func(a, b sessEntry) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
		if !found || p+1 < len(l) && l[p+1].start == t.Start {
			return ghostKept
		}
		if m := l[p].maxBefore; m == math.MaxInt64 || m > t.Start-skew2-1 {
			return ghostKept
		}
	}
	return fate
}

package online

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
)

// B2, B3 and the fold judged from the touched keys' side
// (docs/SEMANTICS.md §5 "B2 and B3 from the touched keys' side").
//
// bypassable judged B2, B3 and F1-F3 per ghost, over every key the
// ghost holds: a GhostKeys lookup per ghost and a lookup of build's
// notes (o.bypass) per key, most of them for keys no op of the instance
// touches, which it skips. instanceGhosts already visits, for each key
// the instance touches, the ghosts holding it (GX1): that pair is
// exactly where the key part of the verdict can fail or fold. So it
// judges each pair there, with one lookup of the key's note per touched
// key, and hands bypassGhosts, beside each ghost it returns, the worst
// verdict over its pairs (keyFates). A ghost found only through a kept
// order or keptCover is kept by B1 and gets ghostKept. The untouched
// keys of a ghost have no note and could only keep it by being list
// keys (B1's list clause): with a list prefix anywhere the per-ghost
// scan runs as before.

// keyFates is instanceGhosts' answer for bypassGhosts: fates[j] is the
// key part of ghosts[j]'s verdict. It holds only for the very list
// instanceGhosts returned (of), and bypassGhosts drops it.
type keyFates struct {
	of    []int
	fates []uint8
	// packed is the scratch of (ghost << shift | pair << 2 | fate),
	// sorted; pair indexes pairs, noPair for a ghost brought in by a
	// kept order or keptCover (pg32_foldpairs.go).
	packed []uint64
	shift  uint
	// pairs are the (touched key, ghost's final value) of each pair the
	// call judged, for foldInit; pairsOK says they are this build's.
	pairs   []foldPair
	pairsOK bool
}

// fusedBypass says whether instanceGhosts judges the key part of the
// bypass (every condition bypassGhosts runs under, and no list prefix).
func (o *Online) fusedBypass() bool {
	return !o.noBypass && !o.noFusedBypass && o.opts.Level.RealTime() && len(o.ev.ListPrefix) == 0
}

// keyFate is the key part of ghost g's verdict for one key k the
// instance touches, bk build's note of k: B3 (every member writer of k
// after g's effective end + 2Δ), then B2 or, where a member reads k,
// F1-F3. A ghost B1 keeps for its status or time is kept here too.
//
// h is g's entry in byKey[k] and holders all of byKey[k]: g's status,
// time and final value of k are read from h (ghostRef), not from g's
// body. A ghost that is not committed with a time has h.end =
// math.MaxInt64 and is kept, as a committed one's effective end is its
// end.
func (o *Online) keyFate(h *ghostRef, holders []ghostRef, bk *bypassKey, k history.Key, skew2 int64) uint8 {
	end := h.end
	if end == math.MaxInt64 || end > math.MaxInt64-skew2-1 {
		return ghostKept
	}
	if bk.minWrite <= end+skew2 {
		return ghostKept
	}
	if bk.read {
		if !o.foldableRef(h, holders, k, bk, end+skew2) { // live_fold.go
			return ghostKept
		}
		return ghostFolded
	}
	return ghostBypassed
}

// fateRank orders the key verdicts: a ghost takes the worst of its keys'
// (kept over folded over left out), as bypassable's loop does.
func fateRank(f uint8) uint8 {
	switch f {
	case ghostKept:
		return 2
	case ghostFolded:
		return 1
	}
	return 0
}

var rankFate = [3]uint8{ghostBypassed, ghostFolded, ghostKept}

// pg31FusedBuilds counts the builds that judged the keys from their side
// (tests; not synchronized: the tests that read it run one engine at a
// time).
var pg31FusedBuilds atomic.Int64

// instanceGhostsFused is instanceGhosts with the key verdicts (fusedBypass).
func (o *Online) instanceGhostsFused(touched map[history.Key]bool, keptAt map[int]bool, cover keptCoverSet) []int {
	st := &o.ev
	gx := &st.gx
	kf := &o.kf
	skew2 := 2 * o.opts.Skew
	packed := kf.packed[:0]
	pairs := kf.pairs[:0]
	shift, pairsOK := packShift(o.log.len())
	isGhost := func(g int) bool { return st.Member.get(g) && st.GhostKeys[g] != nil }
	for k := range touched {
		hs := gx.byKey[k]
		if len(hs) == 0 {
			continue
		}
		bk, noted := o.bypass[k]
		for j := range hs {
			g := hs[j].g
			if !st.Member.get(g) {
				continue
			}
			// Every touched key is noted (build notes each op it
			// marks); one without a note would be skipped by the scan.
			f := uint8(ghostBypassed)
			if noted {
				f = o.keyFate(&hs[j], hs, &bk, k, skew2)
			}
			idx := uint64(noPair)
			if pairsOK {
				if idx = uint64(len(pairs)); idx < noPair {
					pairs = append(pairs, foldPair{k: k, v: hs[j].val})
				} else {
					idx, pairsOK = noPair, false
				}
			}
			packed = append(packed, uint64(g)<<shift|idx<<2|uint64(fateRank(f)))
		}
	}
	for g := range keptAt {
		if isGhost(g) {
			packed = append(packed, uint64(g)<<shift|noPair<<2|2)
		}
	}
	for _, rg := range cover.ranges {
		at, _ := slices.BinarySearchFunc(gx.byStart, ghostAt{rg[0], -1 << 62}, cmpGhostAt)
		for ; at < len(gx.byStart) && gx.byStart[at].start <= rg[1]; at++ {
			if g := gx.byStart[at].i; isGhost(g) && cover.covered(g) {
				packed = append(packed, uint64(g)<<shift|noPair<<2|2)
			}
		}
	}
	slices.Sort(packed)
	out := make([]int, 0, len(packed))
	fates := kf.fates[:0]
	for _, p := range packed {
		g, r := int(p>>shift), uint8(p&3)
		if n := len(out); n > 0 && out[n-1] == g {
			// Sorted: the same ghost's entries are adjacent; it takes
			// the worst.
			if r > fateRank(fates[n-1]) {
				fates[n-1] = rankFate[r]
			}
			continue
		}
		out = append(out, g)
		fates = append(fates, rankFate[r])
	}
	kf.packed, kf.fates, kf.of = packed, fates, out
	kf.shift, kf.pairs, kf.pairsOK = shift, pairs, pairsOK
	pg31FusedBuilds.Add(1)
	return out
}

// fatesFor returns the key verdicts of ghosts if instanceGhosts judged
// them for this very list, else nil; either way they are used up.
func (o *Online) fatesFor(ghosts []int) []uint8 {
	kf := &o.kf
	of, fates := kf.of, kf.fates
	kf.of = nil
	if len(of) == 0 || len(of) != len(ghosts) || &of[0] != &ghosts[0] || len(fates) != len(ghosts) {
		return nil
	}
	return fates
}

// checkKeyFate holds a key verdict from the touched keys' side to
// bypassable's per-ghost scan (selfCheck).
func (o *Online) checkKeyFate(g int, fate uint8, skew2 int64, keptAt map[int]bool, cover keptCoverSet, sess map[string][]sessEntry) {
	fast := o.bypassableWith(g, skew2, keptAt, cover, sess, int(fate))
	slow := o.bypassableWith(g, skew2, keptAt, cover, sess, -1)
	if fast != slow {
		panic(fmt.Sprintf("engine self-check: ghost %d: the touched keys' verdict %d, the scan of its keys %d", g, fast, slow))
	}
}

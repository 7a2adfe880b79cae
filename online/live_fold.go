package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Ghosts folded into the initial node (docs/SEMANTICS.md §5 "Ghosts
// whose readers all follow them: the initial node").
//
// "Ghosts that only precede" (evict_bypass.go) leaves a ghost G out of
// a step's instance when no op of the instance reads a key G holds
// (B2). On the PostgreSQL recording most ghosts a step keeps fail B2
// alone: a member reads the version G holds. When every such read
// follows G in real time and reads G's very version, G's version acts
// in the instance as a key's initial value does: it precedes every op
// on the key, and every read of the key reads it. G is then left out
// and its version of each key the instance touches is written by the
// instance's initial node instead (the node that holds the fixed
// initial values, before everything in real time), when besides B1, B3
// and B4, for every key k of G that an op of the instance reads:
//
//	F1 every op of the instance reading k is a register read of G's
//	   final value of k, by a member with a time;
//	F2 every such reader starts after G's effective end + 2Δ (G
//	   precedes it in real time);
//	F3 G is the only ghost holding k, and k's live version (LiveOf).
//
// Eviction meets G's version as the initial node's: R4's live version
// of a folded key is the initial node (livePos), so the reads a writer
// of k overwrites are those of that node, replaced as a ghost's would be
// (the order "source before reader" is real time, not kept); the
// alert path's local history takes G's body as if G were in the
// instance (localAlertHistory).

// foldable reports F1-F3 for ghost g's key k, read by an op of the
// instance (bk is build's note of k, bound g's effective end + 2Δ).
func (o *Online) foldable(g int, k history.Key, bk *bypassKey, bound int64) bool {
	if o.noFold || bk.mixed || !bk.hasVal || bk.minRead <= bound {
		return false
	}
	// The value first: a scan of a short body, where the others are
	// lookups in maps over every key ever written.
	if v, ok := o.finalWrite(o.log.at(g), k); !ok || v != bk.readVal {
		return false
	}
	st := &o.ev
	if l, has := st.LiveOf[k]; !has || l != g {
		return false
	}
	holders := st.gx.byKey[k]
	return len(holders) == 1 && holders[0].g == g
}

// foldableRef is foldable for the pair keyFate judges: h is g's entry in
// byKey[k] (g = h.g), holders all of byKey[k]. It reads g's final value
// of k from h, not from g's body, and F3's holders from the list at
// hand: the same verdict (the self-check holds each to bypassable's).
func (o *Online) foldableRef(h *ghostRef, holders []ghostRef, k history.Key, bk *bypassKey, bound int64) bool {
	if o.noFold || bk.mixed || !bk.hasVal || bk.minRead <= bound {
		return false
	}
	if !h.wrote || h.val != bk.readVal || len(holders) != 1 {
		return false
	}
	l, has := o.ev.LiveOf[k]
	return has && l == h.g
}

// foldInit adds to the step's initial node the versions of the folded
// ghosts (foldNow) of the keys the instance touches: it returns initKeys
// with those keys added, and fills o.foldVal with their values, which
// take the place of a fixed initial value of the same key.
func (o *Online) foldInit(touched map[history.Key]bool, initKeys []history.Key) []history.Key {
	if o.foldVal == nil {
		o.foldVal = map[history.Key]history.Value{}
	}
	clear(o.foldVal)
	if o.foldSet == nil {
		o.foldSet = map[int]bool{}
	}
	clear(o.foldSet)
	if o.kf.pairsOK && slices.IsSorted(o.foldNow) {
		if selfCheck.Load() {
			return o.checkFoldPairs(touched, initKeys) // pg32_foldpairs.go
		}
		return o.foldInitPairs(initKeys) // pg32_foldpairs.go
	}
	return o.foldInitScan(touched, initKeys)
}

// foldInitScan is foldInit by a scan of each folded ghost's keys.
func (o *Online) foldInitScan(touched map[history.Key]bool, initKeys []history.Key) []history.Key {
	st := &o.ev
	for _, g := range o.foldNow {
		o.foldSet[g] = true
		body := o.log.at(g)
		for _, k := range st.GhostKeys[g] {
			if !touched[k] {
				continue
			}
			v, _ := o.finalWrite(body, k)
			o.foldVal[k] = v
			if _, fixed := st.InitVal[k]; !fixed {
				initKeys = append(initKeys, k)
			}
		}
	}
	return initKeys
}

// initValue is the step's initial node's value of k: a folded ghost's
// version, else the fixed initial value.
func (o *Online) initValue(k history.Key) history.Value {
	if v, ok := o.foldVal[k]; ok {
		return v
	}
	return o.ev.InitVal[k]
}

// foldedLive reports whether ghost g was folded into this step's
// initial node.
func (r *reduced) foldedLive(g int) bool {
	return r.foldSet[g]
}

// withFolded returns set with the step's folded ghosts that keep is
// true of added.
func (r *reduced) withFolded(set []int, keep func(int) bool) []int {
	if len(r.folded) == 0 {
		return set
	}
	for _, g := range r.folded {
		if keep(g) {
			set = append(set, g)
		}
	}
	slices.Sort(set)
	return slices.Compact(set)
}

package online

import (
	"fmt"
	"maps"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// The fold's initial values from the pairs the bypass judged
// (docs/SEMANTICS.md §5 "The ghost index carries what the bypass reads").
//
// foldInit gives the step's initial node, for each folded ghost G (in
// foldNow's order) and each key k of G that the instance touches, G's
// final value of k. It found those keys by looking G up in GhostKeys and
// each of G's keys up in the touched set. instanceGhostsFused visits the
// very same pairs: for each touched key k, each member ghost holding it
// (byKey[k], GhostKeys inverted). It now keeps, for each pair it judges,
// k and G's final value of k (from byKey's entry), and numbers the pair
// in its packed sort key, so that after the sort a ghost's pairs are
// adjacent and ghosts ascend. foldNow ascends too (bypassGhosts walks
// the ghosts instanceGhosts returned, in order), so foldInitPairs merges
// the two: the same pairs, ghost by ghost in the same order. Within one
// ghost the order of its keys is not the scan's, which changes nothing:
// its keys are distinct, so each sets a different foldVal entry, and
// initKeys is sorted after.

// foldPair is one judged pair: the touched key and the ghost's final
// value of it ("" when it has none, as finalWrite gives).
type foldPair struct {
	k history.Key
	v history.Value
}

// pairBits is the width of a pair's number in a packed entry; noPair
// (all ones) marks an entry with no pair.
const (
	pairBits = 22
	noPair   = 1<<pairBits - 1
)

// packShift is the shift of the ghost in a packed entry for a log of n
// transactions, and whether pairs are numbered: with positions past
// 2^40 the entry is (ghost << 2 | fate) as before, and foldInit scans.
func packShift(n int) (uint, bool) {
	if uint64(n) < 1<<(62-pairBits) {
		return 2 + pairBits, true
	}
	return 2, false
}

// foldInitPairs is foldInit from this build's judged pairs (kf.pairsOK),
// which it uses up.
func (o *Online) foldInitPairs(initKeys []history.Key) []history.Key {
	kf := &o.kf
	kf.pairsOK = false
	st := &o.ev
	for _, g := range o.foldNow {
		o.foldSet[g] = true
	}
	fold := o.foldNow
	j := 0
	for _, p := range kf.packed {
		g := int(p >> kf.shift)
		for j < len(fold) && fold[j] < g {
			j++
		}
		if j == len(fold) {
			break
		}
		idx := (p >> 2) & noPair
		if fold[j] != g || idx == noPair {
			continue
		}
		pr := &kf.pairs[idx]
		o.foldVal[pr.k] = pr.v
		if _, fixed := st.InitVal[pr.k]; !fixed {
			initKeys = append(initKeys, pr.k)
		}
	}
	return initKeys
}

// checkFoldPairs (selfCheck) is foldInit from the pairs, held to the
// scan: the same initial keys (as a sorted list) and the same values.
func (o *Online) checkFoldPairs(touched map[history.Key]bool, initKeys []history.Key) []history.Key {
	base := slices.Clone(initKeys)
	fast := o.foldInitPairs(initKeys)
	fastVal, fastSet := maps.Clone(o.foldVal), maps.Clone(o.foldSet)
	clear(o.foldVal)
	clear(o.foldSet)
	slow := o.foldInitScan(touched, base)
	a, b := slices.Clone(fast), slices.Clone(slow)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) || !maps.Equal(fastVal, o.foldVal) || !maps.Equal(fastSet, o.foldSet) {
		panic(fmt.Sprintf("engine self-check: the fold from the judged pairs gives initial keys %v and values %v, the scan %v and %v", a, fastVal, b, o.foldVal))
	}
	return slow
}

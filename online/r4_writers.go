package online

// writersLeft returns the writers of interned key k that are still in
// this step's instance (not removed by R5 since the step began), in
// position order, which is the order of p.WritersOf()[k].
//
// R4 (r4Earlier, r4LiveVersion) and the list rule (listPrefix) scan the
// writers of every key a transaction they try writes, and skip the ones
// removed earlier in the step. On a burst inside one tick, one step
// evicts most of the burst: for each evicted writer the scan went over
// every writer of the key, the evicted ones included, quadratic in
// writers per key (issue 20, item 7). removed only gets set within a
// step (r5Remove sets it, nothing clears it before the next step builds
// a new evictStep), so a writer skipped once is skipped at every later
// scan of the step: the list of each key is compacted in place as it is
// read, and each removed writer is passed over once per key after its
// removal, not once per later writer.
//
// The callers' loops are unchanged: they see the same writers, in the
// same order, minus ones they would have skipped on removed alone, so
// they decide the same (TestWritersLeftIsTheNaiveScan holds the index to
// the filtered p.WritersOf()[k] at every call, on generated streams).
func (s *evictStep) writersLeft(k int32) []int32 {
	if s.wLeft == nil {
		s.wLeft = make([][]int32, len(s.p.Keys()))
		s.wLeftInit = make([]bool, len(s.p.Keys()))
	}
	ws := s.wLeft[k]
	if !s.wLeftInit[k] {
		// A copy: WritersOf is the prepared history's, shared with the
		// encoder and the rest of the step.
		ws = append([]int32(nil), s.p.WritersOf()[k]...)
		s.wLeftInit[k] = true
	}
	j := 0
	for _, w := range ws {
		if !s.removed[w] {
			ws[j] = w
			j++
		}
	}
	ws = ws[:j]
	s.wLeft[k] = ws
	if writersLeftCheck != nil {
		writersLeftCheck(s, k, ws)
	}
	return ws
}

// writersLeftCheck, when set (tests), is called with every list
// writersLeft returns, to hold it to the naive scan.
var writersLeftCheck func(s *evictStep, k int32, ws []int32)

package online

// readsOfVersion returns the indexes (into the encoder's reads, in that
// order) of the instance's register reads of key k that have writer w's
// version as a candidate; w < 0 asks for the initial version's readers.
//
// R4 (r4LiveVersion) asks, for each writer t it lets leave and each key
// k t writes, for the reads of the version t overwrites. It found them
// by scanning every read of every transaction that touches k: per key,
// writers times readers times reads per reader, a quarter of run's CPU
// on a burst of 30K transactions in one tick. The index is built once a
// step, at R4's first question, in one pass over the reads (their
// candidates are fixed at encoding: probes add clauses, never reads), so
// each read is visited once per version it may have read. The reads it
// returns, and their order, are exactly those of the scan: the reads of
// the accessors of k in position order, each reader's reads in order,
// whose candidates include w's version. Readers removed since the step
// began are skipped by the caller, as the scan did.
func (s *evictStep) readsOfVersion(k, w int32) []int32 {
	if w < 0 {
		w = -1
	}
	if s.byVersion == nil {
		s.indexVersions()
	}
	if j, ok := s.byVersion[[2]int32{k, w}]; ok {
		return s.versions[j]
	}
	return nil
}

// indexVersions builds readsOfVersion's index: each (key, candidate)
// names a list of s.versions, in the order its first read was met. The
// map (cleared) and the lists (emptied) are the last step's
// (live_scratch.go): a map of new lists per step was the largest of
// eviction's allocations on the PostgreSQL recording. Every list is
// emptied before the pass and filled in the pass's order, so each holds
// what a fresh one would.
func (s *evictStep) indexVersions() {
	p, e, sx := s.p, s.e, s.sx
	if sx.byVersion == nil {
		sx.byVersion = map[[2]int32]int32{}
	}
	clear(sx.byVersion)
	s.byVersion = sx.byVersion
	lists := sx.versions[:0]
	for ri := range e.Reads() {
		rv := &e.Reads()[ri]
		rd := &p.Txns()[rv.Txn()].Reads()[rv.Read()]
		if rd.IsList() {
			continue
		}
		for _, c := range e.Cands(rv) {
			if c < -1 {
				continue
			}
			key := [2]int32{rd.Key(), c}
			j, ok := s.byVersion[key]
			if !ok {
				j = int32(len(lists))
				if len(lists) < cap(lists) {
					lists = lists[:j+1]
					lists[j] = lists[j][:0]
				} else {
					lists = append(lists, nil)
				}
				s.byVersion[key] = j
			}
			if rs := lists[j]; len(rs) == 0 || rs[len(rs)-1] != int32(ri) {
				lists[j] = append(rs, int32(ri))
			}
		}
	}
	sx.versions, s.versions = lists, lists
}

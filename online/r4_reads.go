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
		p, e := s.p, s.e
		s.byVersion = map[[2]int32][]int32{}
		for ri := range e.Reads() {
			rv := &e.Reads()[ri]
			rd := &p.Txns()[rv.Txn()].Reads()[rv.Read()]
			if rd.IsList() {
				continue
			}
			for _, c := range e.Cands(rv) {
				key := [2]int32{rd.Key(), c}
				if rs := s.byVersion[key]; c >= -1 && (len(rs) == 0 || rs[len(rs)-1] != int32(ri)) {
					s.byVersion[key] = append(rs, int32(ri))
				}
			}
		}
	}
	return s.byVersion[[2]int32{k, w}]
}

package oracle

import (
	"github.com/streamcheck/streamcheck/history"
)

// CheckSIStamps is the snapshot family's brute force (checkSI) with the
// database's facts as extra constraints on the sequence of begins and
// commits (docs/SEMANTICS.md §10 "The snapshot levels with facts"), by the
// definition and sharing no code with stampcheck:
//
//   - commit and snapshot stamps, for candidates a != b: C_a before B_b
//     when commit_ts(a) < start_ts(b), else B_b before C_a; C_a before
//     C_b when commit_ts(a) < commit_ts(b) (equal commit stamps order
//     nothing);
//   - PostgreSQL's facts, for candidates a != b where a writes a key b
//     reads or writes: C_a before B_b when b's snapshot sees a's xid,
//     else B_b before C_a.
//
// An unknown transaction's facts constrain it when the search takes it as
// committed. decided is false when §10 does not use the facts at the
// level: some committed transaction lacks them (both stamps, or xid and
// snapshot), or PostgreSQL's facts at a level with real-time order (they
// give no commit order to hold it against).
func CheckSIStamps(h *history.History, opts history.Options) (valid, decided bool, witness []string, err error) {
	if err := checkInput(h, opts); err != nil {
		return false, false, nil, err
	}
	if h.Facts == nil {
		return false, false, nil, nil
	}
	pg, stamps := usesPGFacts(h)
	if !stamps {
		// usesPGFacts refuses PostgreSQL's facts when an unknown
		// transaction writes (the serializable levels' rule); here they
		// are used whenever every committed transaction has them.
		pg = true
		for i := range h.Txns {
			f := h.Facts[i].Has
			if h.Txns[i].Status == history.Committed && f&(history.HasXid|history.HasSnapshot) != history.HasXid|history.HasSnapshot {
				pg = false
			}
		}
	}
	full := history.HasCommitTS | history.HasStartTS
	for i := range h.Txns {
		if h.Txns[i].Status != history.Committed {
			continue
		}
		if stamps && h.Facts[i].Has&full != full {
			return false, false, nil, nil
		}
	}
	if !stamps && !pg {
		return false, false, nil, nil
	}
	if pg && opts.Level.RealTime() {
		return false, false, nil, nil
	}
	extra := func(s *siSearch) {
		n := len(s.cand)
		s.afterBegin = make([]uint, n)
		before := func(a, b int) { s.beforeBegin[b] |= 1 << a } // C_a < B_b
		after := func(a, b int) { s.afterBegin[a] |= 1 << b }   // B_b < C_a
		for a := range s.cand {
			for b := range s.cand {
				ia, ib := s.cand[a].idx, s.cand[b].idx
				if a == b {
					continue
				}
				fa, fb := h.Facts[ia], h.Facts[ib]
				if stamps {
					if fa.Has&history.HasCommitTS != 0 && fb.Has&history.HasStartTS != 0 {
						if fa.CommitTS < fb.StartTS {
							before(a, b)
						} else {
							after(a, b)
						}
					}
					if fa.Has&fb.Has&history.HasCommitTS != 0 && fa.CommitTS < fb.CommitTS {
						s.beforeCommit[b] |= 1 << a
					}
					continue
				}
				if fa.Has&history.HasXid == 0 || fb.Snap == nil {
					continue
				}
				for k := range touches(&h.Txns[ib]) {
					if !writesKey(&h.Txns[ia], k) {
						continue
					}
					if fb.Snap.Sees(fa.Xid) {
						before(a, b)
					} else {
						after(a, b)
					}
				}
			}
		}
	}
	valid, witness, err = checkSIWith(h, opts, extra)
	return valid, true, witness, err
}

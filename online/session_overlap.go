package online

import "github.com/streamcheck/streamcheck/history"

// A session whose transactions overlap (docs/SEMANTICS.md §5 "A session
// whose transactions overlap").
//
// R3 lets t leave with an open neighbour that precedes it by the level's
// order: a transaction b to come that follows t in real time follows
// that neighbour too, since session order is start order and a client
// session runs one transaction at a time. A stream may break that: a
// session member u that starts before t and ends after it. Session order
// still puts u before t, and t before every b that starts after t ends,
// but b need not follow u in real time, so once t has left, u -> t -> b
// was in no instance: an anomaly through it was never alerted. While such
// a u is open, t stays.

// openOverlapBefore: a committed member ranked before t in t's session is
// open and ends after t. (An unknown in doubt has its anchor, the first
// committed closed member after it, which stays while it is in doubt;
// one decided committed ends with that member, rmw31_sessend.go, and
// every b to come follows it.)
func (s *evictStep) openOverlapBefore(t int32) bool {
	p, r := s.p, s.r
	lv := p.Opts().Level
	ss := p.SessionOf()[t]
	if ss < 0 || !lv.SessionOrder() || !lv.RealTime() {
		return false
	}
	if s.openSess == nil {
		s.openSess = map[int32][]int32{}
		for u := range r.h.Txns {
			i := r.pos[u]
			if i < 0 || r.ghost[u] || s.o.closed.get(i) || s.o.ended(i) || r.h.Txns[u].Status != history.Committed {
				continue
			}
			if su := p.SessionOf()[u]; su >= 0 {
				s.openSess[su] = append(s.openSess[su], int32(u))
			}
		}
	}
	end := r.h.Txns[t].End
	for _, u := range s.openSess[ss] {
		if p.SessionRank()[u] < p.SessionRank()[t] && r.h.Txns[u].End > end {
			return true
		}
	}
	return false
}

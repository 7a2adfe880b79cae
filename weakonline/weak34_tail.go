package weakonline

// lastOfSession marks, for a tail of a key's log (a suffix of its
// writes in release order, keyWriters.log), the entries that are the
// last of their session in it: bit x of last is set when no later entry
// of tail has tail[x]'s session. ok is false when the marks do not fit
// (a tail of more than 64 entries, a session numbered 64 or more); the
// caller then asks keyWriters.lastT as before.
//
// Within a session positions grow with release order (release gives
// each node its predecessor's position plus one), so the session's last
// entry in release order is its write at the greatest position, the
// one keyWriters.add keeps in lastPos and lastT; the tail holds every
// write released after its first entry, so a session's last entry in
// the tail is its last write of the key. forcedCausal read it off
// kw.at and kw.lastT instead: two arrays, a cache miss each per visited
// entry (the line was a third of forcedCausal's time on u300k, 5.5% of
// run --level causal's).
func lastOfSession(tail []logEntry) (last uint64, ok bool) {
	if len(tail) > 64 || naiveTail {
		return 0, false
	}
	var seen uint64 // sessions with an entry later in the tail
	for x := len(tail) - 1; x >= 0; x-- {
		s := tail[x].s
		if s >= 64 {
			return 0, false
		}
		if seen&(1<<s) == 0 {
			seen |= 1 << s
			last |= 1 << x
		}
	}
	return last, true
}

// naiveTail makes forcedCausal find a session's last write through
// keyWriters.lastT (the tests' reference).
var naiveTail bool

// forcedFromLast is forcedFrom for the tail entry en that is its
// session's last write of the key (lastOfSession), whose position and
// node are then lastPos and lastT of the session's index in kw, and
// whose position c2 does not reach (the caller checked): forcedFrom's
// first test fails, and its lookup of the last writer at a position
// <= p is en itself when p reaches en.pos, so the session's index is
// found only for an earlier writer.
func (f *fast) forcedFromLast(kw *keyWriters, en logEntry, n, t2 int32, clk, c2 []int32, own, ownP int32, old []int32) {
	s := en.s
	p, ok := newPastPos(clk, s, own, ownP, old) // fast.go
	if !ok {
		return
	}
	if int(s) < len(c2) && c2[s] >= p {
		return
	}
	w := posTxn{en.pos, en.t}
	if p < en.pos {
		e := lastEntry(kw.lists[kw.find(s)], p)
		if e == nil {
			return
		}
		w = *e
	}
	if w.t != n && !(int(s) < len(c2) && c2[s] >= w.pos) {
		f.forced(w.t, t2)
	}
}

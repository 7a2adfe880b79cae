package online

// A session tie keeps its order (docs/SEMANTICS.md §5 "An unknown
// decided committed ends at its anchor's end", its last paragraph,
// lead34).
//
// Session order ranks a session's transactions by start, a tie by end
// (docs/SEMANTICS.md §1 "Session order"). sessEnded gives an unknown U
// decided committed the end of K, a later member of its session; when
// another transaction M of U's session starts at U's start, that moves U
// from before M to after it whenever end(K) passes M's end, and the
// instance's session edge between them turns round: the schedule hunt
// (seed 111, history 18,572) had M read U's write, a garbage read in the
// instance that the bodies do not show (a disagreement). Such a U keeps
// its own end: the rule is off for it, and markInDoubt anchors it as
// before the rule.

// sessTieOff switches the check off (mutation checks, by hand).
var sessTieOff = false

// sharesSessionStart: another released transaction of i's session
// starts when i does. Releases are in start order, so such a
// transaction is a neighbour of i in the log, within the run of i's
// start; all of them are released with i (the watermark passed that
// start), so the answer never changes once i is released. A neighbour
// whose body has left memory is taken to share it (the rule is only
// off for i then).
func (o *Online) sharesSessionStart(i int) bool {
	if sessTieOff {
		return false
	}
	u := o.log.at(i)
	for _, dir := range [2]int{-1, 1} {
		for j := i + dir; j >= 0 && j < o.log.len(); j += dir {
			if !o.log.inMemory(j) {
				return true
			}
			t := o.log.at(j)
			if t.Start != u.Start {
				break
			}
			if t.HasSession && t.Session == u.Session {
				return true
			}
		}
	}
	return false
}

package incremental

import "testing"

// TestLastStartOncePerRead: listParses computes a list read's bound on
// initial prefixes (lastStart, a pass over the key's appenders) once per
// read, not once per prefix tried. In the loop's condition it ran
// bound+2 times per read, each pass O(appenders): the encode of a burst
// inside one tick paid list length times appenders per read (issue 20,
// item 7). On TestLastStartKeepsTheEncoding's histories (list reads under
// an unknown initial state, with bounds of one prefix or more) the
// passes equal the list reads encoded. Mutation: lastStart back in the
// loop's condition fails here (applied once, observed, reverted).
func TestLastStartOncePerRead(t *testing.T) {
	longer := 0
	for i := range tinyCount(60) {
		p, _ := burstCase(t, i)
		e := newEncoder(p, encodeConfig{})
		e.encode()
		reads := 0
		for ri := range e.reads {
			rv := &e.reads[ri]
			if p.txns[rv.txn].reads[rv.read].isList() {
				reads++
			}
		}
		if e.lastStarts != reads {
			t.Fatalf("history %d: %d passes of lastStart for %d list reads", i, e.lastStarts, reads)
		}
		longer += reads
	}
	if longer == 0 {
		t.Fatal("no list read under an unknown initial state")
	}
}

package online

import "testing"

// TestDecidedOnlyMembers: a commit decision is kept only while its
// transaction is in the instance. W1's unknown outcome is decided by R's
// read (it committed); W1 stays as the ghost of x until W2 overwrites it,
// and then leaves, its decision with it. Kept for evicted transactions,
// Decided grew with every unknown outcome ever released and build walked
// all of it at every step.
func TestDecidedOnlyMembers(t *testing.T) {
	h, o := evictingEngine(t, "W1[0,10] w x1 (unknown) · R[20,30] r x1 · W2[40,50] w x2 · W3[60,70] w x3")
	ids := make([]string, len(h.Txns))
	for i := range h.Txns {
		ids[i] = h.Txns[i].ID
	}
	releaseCloseStep(t, h, o, ids...)
	w1 := o.index["W1"]
	if _, ok := o.index["W1"]; ok && o.ev.Member.get(w1) {
		t.Fatalf("W1 is still a member (stats %+v): the test does not reach the case", o.Stats())
	}
	for i := range o.ev.Decided {
		if !o.ev.Member.get(i) {
			t.Errorf("Decided keeps %d, which left the instance", i)
		}
	}
	if o.ev.Evicted < 3 {
		t.Fatalf("evicted %d, want W1, R and W2 at least (stats %+v)", o.ev.Evicted, o.Stats())
	}
}

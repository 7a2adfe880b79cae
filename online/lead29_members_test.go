package online

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestMemberListBoundedWithoutUnknowns: the member list drops evicted
// entries lazily, in memberList, which only some steps call (an unknown
// in doubt, a replay). On a stream of blind writes with no unknown
// outcome no step calls it, and admit alone must keep the list within a
// constant factor of the window: before, it held every transaction ever
// admitted (16 MB of a 44 MB in-use heap after 1.8M blind writes). The
// self-checks call memberList after every step, which hid this from
// every other test: they are off here, as in production.
func TestMemberListBoundedWithoutUnknowns(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(false))
	h, o := evictingEngine(t, "W0[0,10] w x1")
	ctx := context.Background()
	o.Release(h.Txns...)
	o.Close(h.Txns[0].ID)
	if _, err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20000
	var batch []history.Txn
	for i := range n {
		at := int64(100 + 10*i)
		batch = append(batch, history.Txn{ID: fmt.Sprintf("F%d", i), Start: at, End: at + 5, HasTime: true, Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("f%d", i%50)), Value: history.Value(fmt.Sprint(i))}}})
		if len(batch) == 500 || i == n-1 {
			o.Release(batch...)
			for _, tx := range batch {
				o.Close(tx.ID)
			}
			if _, err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	live := 0
	var want []int
	for i := range o.ev.Member.len() {
		if o.ev.Member.get(i) {
			live++
			want = append(want, i)
		}
	}
	if o.ev.Evicted < n/2 {
		t.Fatalf("only %d of %d evicted: the stream does not test the list", o.ev.Evicted, n)
	}
	if !o.ev.listed {
		t.Fatal("the member list was never built: the stream does not test it")
	}
	// A step releases 500, all members until it evicts them: the list's
	// bound is a constant factor of that, not of the stream.
	if got := len(o.ev.members); got > 4*(500+live)+128 {
		t.Fatalf("the member list holds %d entries for %d members after %d transactions", got, live, n)
	}
	if got := o.ev.memberList(); !slices.Equal(got, want) {
		t.Fatalf("memberList %v, members %v", got, want)
	}
}

package weakonline

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestNextWriterAtClose: a read of a repeated value whose first pick
// (choose: the writer that ended last) would close a cycle through a
// forced edge at the reader's close takes another writer of the value
// (fast.reconsider, docs/SEMANTICS.md §5 "Repeated values: the next
// writer at a close"), at read atomic and causal.
//
// NW1 is valid: B, choose's pick for R's read of x=1, reaches P (P reads
// y from it), and P, R's session predecessor, wrote x, so the forced edge
// P -> B closes a cycle; A is a witness (x: B, P, A). The fast path must
// vouch for it without an exact check (a fast path that keeps B checks).
//
// NW2 is a violation the look-ahead cannot see: R's later read of z from
// Q puts Q, a writer of x that read u from A, in R's past, so A fails too
// (Q -> A closes A -> Q) once R's second read is in. The look-ahead, made
// at R's first read, takes A; a fast path that took its look-ahead for a
// check of A's forced edges (and added none at the close) vouches for the
// history and misses the alert.
//
// NW3 is NW1 with A begun after R ended: no possible writer of R's read
// (the real-time read rule), so B's cycle is a violation; a look-ahead
// that forgot the rule took A and vouched for it.
func TestNextWriterAtClose(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		alerts int
		checks bool // exact checks allowed
	}{
		{
			name: "NW1 the next writer is a witness", alerts: 0,
			text: `A[0,10] w x 1 (session a)
B[0,20] w x 1, w y 1 (session b)
P[30,40] r y 1, w x 2 (session c)
R[50,60] r x 1 (session c)`,
		},
		{
			name: "NW2 the next writer fails on a later read's past", alerts: 1, checks: true,
			text: `A[0,10] w x 1, w u 1 (session a)
B[0,20] w x 1, w y 1 (session b)
P[30,40] r y 1, w x 2 (session c)
Q[30,45] r u 1, w x 3, w z 1 (session d)
R[50,60] r x 1, r z 1 (session c)`,
		},
		{
			name: "NW3 the next writer began after the reader ended", alerts: 1, checks: true,
			text: `B[0,20] w x 1, w y 1 (session b)
P[30,40] r y 1, w x 2 (session c)
R[50,60] r x 1 (session c)
A[61,62] w x 1 (session a)`,
		},
	}
	for _, lv := range []history.Level{history.ReadAtomic, history.Causal} {
		for _, rc := range cases {
			t.Run(lv.String()+" "+rc.name, func(t *testing.T) {
				h, err := history.ParseCompact(rc.text)
				if err != nil {
					t.Fatal(err)
				}
				for i := range h.Txns {
					h.Txns[i].Pos = history.Pos{}
				}
				opts := history.DefaultOptions()
				opts.Level = lv
				order := make([]int, len(h.Txns))
				for i := range order {
					order[i] = i
				}
				// Lateness 5: R closes at a step of its own, with every
				// writer released and closed.
				f := feed{tick: 5, order: order, batch: 1, restart: -1, lateness: 5, noRetire: true}
				fast, e := runFeed(t, h, opts, f)
				f.noFast = true
				full, _ := runFeed(t, h, opts, f)
				sameAlerts(t, rc.name, fast, full)
				if len(fast) != rc.alerts {
					for _, a := range fast {
						t.Logf("%s %v %v", a.alert.Type, a.alert.Core, a.alert.Text)
					}
					t.Fatalf("%d alerts, want %d", len(fast), rc.alerts)
				}
				checkCores(t, h, opts, fast, e)
				if !rc.checks && e.checks != 0 {
					why := ""
					if e.fast != nil {
						why = e.fast.why
					}
					t.Fatalf("%d exact checks (%s), want none: the next writer was not taken", e.checks, why)
				}
			})
		}
	}
}

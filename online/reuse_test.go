package online

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestReusedIDs: the window lets an ID be used again once its first use is
// past its horizon (window W5). The engine checks the second use as a
// transaction of its own: a lost update among reused IDs is alerted as
// soon as its members close (so closing the reused ID closed the second
// use, not the first, which stays in memory quarantined by an earlier
// alert); each alert's core names resolve to the right bodies (AlertTxn)
// before and after a snapshot round trip, and the core is the one check
// finds on the same history, with later uses named ID@start. (An alert
// history names a later use ID@start only when the first use is in it:
// the second alert here is confirmed on the second uses alone.)
func TestReusedIDs(t *testing.T) {
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprint("evict=", evict), func(t *testing.T) {
			first, err := history.ParseCompact("a[0,10] w x1 · b[20,30] r x1, w x2 · c[22,32] r x1, w x3 · d[60,70] r x3 · e[80,90] w z1")
			if err != nil {
				t.Fatal(err)
			}
			// The same IDs, 10,000 later: b and c both overwrite a's y,
			// and time goes on so that they close.
			second, err := history.ParseCompact("a[0,10] w y1 · b[20,30] r y1, w y2 · c[22,32] r y1, w y3 · f[60,70] r y3 · g[200,210] w q1 · h[400,410] r q1")
			if err != nil {
				t.Fatal(err)
			}
			for i := range second.Txns {
				second.Txns[i].Start += 10000
				second.Txns[i].End += 10000
			}
			all := append(slices.Clone(first.Txns), second.Txns...)
			opts := history.DefaultOptions()
			opts.Level = history.StrictSerializable
			o := NewOnlineConfig(opts, OnlineConfig{Evict: evict})
			var alerts []*Alert
			feedInStartOrder(o, opts, all, func(int) {
				got, err := o.Step(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				alerts = append(alerts, got...)
			})
			if len(alerts) != 2 || !slices.Equal(alerts[0].Core, []string{"a", "b", "c"}) {
				t.Fatalf("before the end of input: %d alerts, want 2, the first on a, b, c: %+v", len(alerts), alerts)
			}
			// The offline check on the history with later uses named apart.
			named := &history.History{Txns: slices.Clone(all)}
			for i := len(first.Txns); i < len(all); i++ {
				tx := &named.Txns[i]
				if slices.ContainsFunc(first.Txns, func(f history.Txn) bool { return f.ID == tx.ID }) {
					tx.ID = fmt.Sprintf("%s@%d", tx.ID, tx.Start)
				}
			}
			res, err := incremental.Check(context.Background(), named, opts, incremental.Config{MaxAnomalies: 2})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != incremental.Invalid || len(res.Anomalies) != 2 {
				t.Fatalf("check: %s %+v", res.Verdict, res.Anomalies)
			}
			resolve := func(o *Online) {
				t.Helper()
				for k, a := range alerts {
					var got []string
					for _, name := range a.Core {
						tx := o.AlertTxn(a, name)
						if tx == nil {
							t.Fatalf("alert %d: AlertTxn(%q) = nil", k, name)
						}
						id := tx.ID
						if tx.Start >= 10000 {
							id = fmt.Sprintf("%s@%d", tx.ID, tx.Start)
						}
						got = append(got, id)
					}
					if want := res.Anomalies[k].Core; !slices.Equal(got, want) {
						t.Fatalf("alert %d: core %v resolves to %v, check's core is %v", k, a.Core, got, want)
					}
				}
			}
			resolve(o)
			snap, err := o.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r, err := RestoreOnline(opts, snap)
			if err != nil {
				t.Fatal(err)
			}
			alerts = r.Alerts()
			resolve(r)
			if got, err := r.Step(context.Background()); err != nil || len(got) > 0 {
				t.Fatalf("restored engine: %v %v", got, err)
			}
		})
	}
}

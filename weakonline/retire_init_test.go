package weakonline

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// The histories that break a naive retirement at read committed under an
// unknown initial state (docs/SEMANTICS.md §5 "Retirement under an
// unknown initial state", R7 in doc.go), driven through the engine's
// calls as TestRetireRegressions drives RT1-RT4. Each runs retiring at
// every step that allows a pass and keeping everything, with and
// without the fast path: the same alert ids, and the expected ones. The
// naive engine (Config.naiveInit: retirement as under an empty initial
// state) misses the alert of each one marked naiveMisses.
var retireInitRegressions = []struct {
	name  string
	calls []rtCall
	want  []struct{ class, member string }
	// retires: a transaction that must have left the engine (the rule
	// lets something go) by the end.
	retires     string
	naiveMisses bool
}{
	{
		// RI1: P's read of x=null has no possible writer but the
		// initial state, so every witness gives x the initial value
		// null. Retiring P with its reads forgotten (as under an empty
		// initial state) leaves L's read of x=5, which nothing wrote,
		// to an initial value of 5: the two initial values of x are
		// missed. P is held with its reads (a pin), yet Q, which reads
		// P's write, retires: P is settled for the propagation.
		name: "RI1 a forced read of the initial state, then another initial value",
		calls: thenL([]rtCall{
			{release: "P[0,10] r x null, w y 1 (session a)"},
			{close: []string{"P"}, step: true},
			{release: "Q[20,30] r y 1, w z 1 (session b)"},
			{close: []string{"Q"}, step: true},
		}, "L[40,50] r x 5 (session c)"),
		want:        []struct{ class, member string }{{"cycle", "P"}},
		retires:     "Q",
		naiveMisses: true,
	},
	{
		// RI2: the same reads of the initial value null again, late,
		// after P retired its neighbours: valid, nothing raised.
		name: "RI2 the pinned value read again",
		calls: thenL([]rtCall{
			{release: "P[0,10] r x null, w y 1 (session a)"},
			{close: []string{"P"}, step: true},
			{release: "Q[20,30] r y 1, w z 1 (session b)"},
			{close: []string{"Q"}, step: true},
		}, "L[40,50] r x null, r z 1 (session c)"),
		retires: "Q",
	},
	{
		// RI3: R's read of x=null takes the initial state in the
		// witness although W, committed, wrote x=null too: W read Q's
		// write, and Q read R's, so taking W closes the cycle
		// R -> Q -> W -> R. That read is not forced: R is unsettled,
		// and so are Q and W behind it. Were R held as a pin (its
		// unforced read counted as forced), Q and W would retire, x=null
		// would enter the summary as a free source, R's read would
		// leave the instance, and L's initial value 5 would pass: the
		// G1c the keeping engine finds (R must take W once x's initial
		// value is 5) is missed. N pins q and z to null, so that W and
		// Q cannot take their reads from the initial state instead.
		name: "RI3 an initial read another writer could explain",
		calls: thenL([]rtCall{
			{release: "N[0,3] r q null, r z null (session f)"},
			{close: []string{"N"}, step: true},
			{release: "R[0,20] r x null, w z 1 (session a)"},
			{release: "W[5,25] r q 1, w x null (session b)"},
			{release: "Q[10,22] r z 1, w q 1 (session c)"},
			{close: []string{"R"}, step: true},
			{close: []string{"Q"}, step: true},
			{close: []string{"W"}, step: true},
		}, "L[40,50] r x 5 (session e)"),
		want:        []struct{ class, member string }{{history.G1c, "W"}},
		naiveMisses: true,
	},
}

// thenL is calls followed by eight unrelated writers, each closed with a
// step (so that the transactions held double and a pass runs,
// maybeRetire, before L arrives), then L released, closed and stepped.
func thenL(calls []rtCall, l string) []rtCall {
	for i := 1; i <= 8; i++ {
		calls = append(calls,
			rtCall{release: fmt.Sprintf("U%d[%d,%d] w u %d (session d)", i, 30+i, 31+i, i)},
			rtCall{close: []string{fmt.Sprintf("U%d", i)}, step: true})
	}
	return append(calls, rtCall{release: l}, rtCall{close: []string{"L"}, step: true})
}

func TestRetireInitRegressions(t *testing.T) {
	ctx := context.Background()
	opts := history.DefaultOptions()
	opts.Level = history.ReadCommitted
	opts.InitialState = history.InitialUnknown
	for _, rc := range retireInitRegressions {
		t.Run(rc.name, func(t *testing.T) {
			run := func(cfg Config) ([]*online.Alert, *Engine) {
				e, err := New(opts, cfg)
				if err != nil {
					t.Fatal(err)
				}
				var got []*online.Alert
				feedCalls(ctx, t, e, rc.calls, func(as []*online.Alert) { got = append(got, as...) })
				return got, e
			}
			ids := func(as []*online.Alert) []string {
				var out []string
				for _, a := range as {
					out = append(out, a.ID)
				}
				return out
			}
			keep, _ := run(Config{NoRetire: true, NoFast: true})
			if len(keep) != len(rc.want) {
				t.Fatalf("keeping engine: %d alerts %v, want %d", len(keep), ids(keep), len(rc.want))
			}
			for k, a := range keep {
				if w := rc.want[k]; (w.class != "" && a.Type != w.class) || !slices.Contains(a.Core, w.member) {
					t.Fatalf("keeping engine: alert %s %v, want %v", a.Type, a.Core, rc.want)
				}
			}
			for _, noFast := range []bool{false, true} {
				got, e := run(Config{retireMin: 1, NoFast: noFast})
				if !slices.Equal(ids(got), ids(keep)) {
					t.Fatalf("fast=%v: alerts retiring %v %v, keeping %v", !noFast, ids(got), got, ids(keep))
				}
				if _, held := e.named(rc.retires); rc.retires != "" && !noFast && held {
					t.Fatalf("%s is still held (retired %d): the rule let nothing go", rc.retires, e.sum.n)
				}
			}
			naive, _ := run(Config{retireMin: 1, naiveInit: true})
			if missed := !slices.Equal(ids(naive), ids(keep)); missed != rc.naiveMisses {
				t.Fatalf("naive retirement: alerts %v, keeping %v (naive misses: %v, want %v)", ids(naive), ids(keep), missed, rc.naiveMisses)
			}
		})
	}
}

// TestDirtyReadAfterSpill: at read committed an aborted writer retires
// with its body (R6); a list op then stops the passes, and closed bodies
// go to the body file (B1). A later read of the aborted value must still
// bring the retired body into the instance: bodiesRead read the reader's
// ops off the heap, where a spilled reader has none, and the G1a became
// a garbage read with the reader alone in the core (found by
// WEAKONLINE_STREAMS=3000 TestTinyAgreesWithOffline, history 2081 of
// read-committed/lists=true, on main as well).
func TestDirtyReadAfterSpill(t *testing.T) {
	h := parsePosless(t, "T1[28,32] r y null, w y 1 (aborted, session c1) · T2[36,47] r y 1, w y 3 (unknown, session c1) · T3[59,69] r y 1, r x [], append x 3, r x [3] (session c1) · T4[69,87] r x [], append x 1, w y 2, r y 2, w y 3, r x [1] (session c1) · T5[95,99] r y 1, r x [3 1], append x 2 (session c1)")
	opts := history.DefaultOptions()
	opts.Level = history.ReadCommitted
	var ids [2][]string
	for k, noRetire := range []bool{false, true} {
		fired, e := runFeed(t, h, opts, feed{tick: 40, order: []int{0, 2, 1, 4, 3}, batch: 2, restart: -1, noRetire: noRetire})
		if sp, _ := e.Spilled(); !noRetire && (e.sum.n == 0 || sp == 0) {
			t.Fatalf("retired %d, spilled %d: the test needs both", e.sum.n, sp)
		}
		for _, f := range fired {
			if f.alert.Type != history.G1a || !slices.Contains(f.alert.Core, "T1") {
				t.Errorf("retire=%v: %s %v, want G1a with T1", !noRetire, f.alert.Type, f.alert.Core)
			}
			ids[k] = append(ids[k], f.alert.ID)
		}
	}
	if len(ids[1]) == 0 || !slices.Equal(ids[0], ids[1]) {
		t.Fatalf("alert ids retiring %v, keeping %v", ids[0], ids[1])
	}
}

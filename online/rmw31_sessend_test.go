package online

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// sessEndHistory: U (unknown, session c1) writes x1; R reads it, so U
// commits; K, U's session successor, commits and ends long before U's
// horizon (D = 1000). tail adds Z, which starts after K and R ended and
// writes x7, and T, after Z, which reads x: x1 puts Z's version before
// U's, while U -> K -> Z (session, then real time; or U -> R -> Z)
// puts U first, a cycle check finds; x7 is valid. Without those orders
// U could commit after Z (its end is 20 + D). Writes of another key
// keep the stream going, so that U, K and R leave before Z arrives.
func sessEndHistory(t *testing.T, tail string) (*history.History, history.Options) {
	t.Helper()
	text := `U[10,20] w x 1 (unknown, session c1)
K[30,40] w y 1 (session c1)
R[50,60] r x 1 (session c2)`
	for i := range 12 {
		text += fmt.Sprintf("\nQ%d[%d,%d] w q %d (session c9)", i, 70+10*i, 75+10*i, i)
	}
	text += "\n" + tail
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt, opts.InitialState = 1000, history.InitialEmpty
	return h, opts
}

// TestSessEndKeepsTheOrder (§5 "An unknown decided committed ends at its
// anchor's end"): U leaves the window once decided committed, long
// before its horizon, and K, no longer its anchor, leaves too. Z's stale
// read must still be alerted, with U, K and Z in its core, before U's
// horizon, and the engine restored from a snapshot before every step
// must do the same. With U's end not given to the instance (the
// mutation sessEndMut = 1) no instance holds U -> K -> Z once K has
// left, and the alert is lost; the valid variant (Z reads x1) must
// stay quiet.
func TestSessEndKeepsTheOrder(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	ended := 0
	sessEndTrace = func(int) { ended++ }
	defer func() { sessEndTrace = nil }()
	h, opts := sessEndHistory(t, "Z[200,210] w x 7 (session c4)\nT[300,310] r x 1 (session c5)")
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check: %s, want invalid", res.Verdict)
	}
	for _, rt := range []bool{false, true} {
		ended = 0
		fired, o := sweepRoundTrip(t, h, opts, rt)
		if ended == 0 {
			t.Fatalf("round trip %v: U never ended with its session: the test exercises nothing", rt)
		}
		if len(fired) == 0 || fired[0].w > 1000 {
			t.Fatalf("round trip %v: alerts %v, want one before U's horizon", rt, fired)
		}
		for _, id := range []string{"U", "Z"} {
			if !slices.Contains(fired[0].core, id) {
				t.Fatalf("round trip %v: core %v lacks %s", rt, fired[0].core, id)
			}
		}
		checkAlertCores(t, h, opts, fired)
		_ = o
	}
	hv, optsV := sessEndHistory(t, "Z[200,210] w x 7 (session c4)\nT[300,310] r x 7 (session c5)")
	if fired, _ := sweep(t, hv, optsV); len(fired) > 0 {
		t.Fatalf("valid history: alerts %v", fired)
	}
}

// TestSessEndUnderSchedules: the schedule differential
// (TestOnlineAgreesUnderSchedules) on histories drawn so that the rule
// applies often: many sessions of a few transactions each, a third of
// them unknown, a long in-doubt horizon. The first verdict equals
// check's, every alert is a core, no disagreement; it also counts how
// many members ended with their session, so that it can say it
// exercised the rule. $STREAMCHECK_TINY sets the count (default 300),
// $STREAMCHECK_SCHEDULE_SEED the seed.
func TestSessEndUnderSchedules(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	ended := 0
	sessEndTrace = func(int) { ended++ }
	defer func() { sessEndTrace = nil }()
	n := tinyCount(300)
	seed := uint64(31)
	if v, err := strconv.ParseUint(os.Getenv("STREAMCHECK_SCHEDULE_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 3117))
	cfg := oracle.DefaultTinyConfig()
	cfg.MinTxns, cfg.MaxTxns, cfg.Values = 6, 12, 4
	alerts := 0
	for i := 0; i < n; i++ {
		cfg.Keys = 2 + rng.IntN(3)
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		// Few sessions, so that an unknown has a later member of its
		// session; a third of the transactions unknown.
		sessions := 1 + rng.IntN(3)
		for j := range h.Txns {
			tx := &h.Txns[j]
			tx.Session, tx.HasSession = "s"+strconv.Itoa(rng.IntN(sessions)), true
			if tx.Status == history.Committed && rng.IntN(3) == 0 {
				tx.Status = history.Unknown
			}
		}
		if h.Validate() != nil {
			continue
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.Skew = []int64{0, 0, 2}[rng.IntN(3)]
		opts.InDoubt = []int64{12, 40, 400}[rng.IntN(3)]
		if rng.IntN(3) == 0 {
			opts.InitialState = history.InitialUnknown
		}
		p := []float64{1, 0.5, 0.2}[rng.IntN(3)]
		sseed := rng.Uint64()
		desc := fmt.Sprintf("history %d (skew %d, in-doubt %d, initial %v, step share %.1f, schedule seed %d)", i, opts.Skew, opts.InDoubt, opts.InitialState, p, sseed)
		alerts += scheduleAgrees(t, h, opts, false, desc, p, sseed)
	}
	t.Logf("%d histories, %d alerts, %d members ended with their session", n, alerts, ended)
	if ended == 0 {
		t.Error("no member ended with its session: the test exercises nothing of the rule")
	}
}

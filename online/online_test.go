package online

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/state"
)

// firing records when an alert fired: the watermark then, and the core.
type firing struct {
	w       int64
	core    []string
	updated bool
	typ     string
}

// sweep feeds h to an Online engine the way the window would: the
// watermark W walks over every start and end instant; transactions are
// released once W passes their start (in start order) and close once
// effEnd+Δ < W-Δ; a step runs after each move; at the end everything
// closes. It returns every alert as it fired.
func sweep(t *testing.T, h *history.History, opts history.Options) ([]firing, *Online) {
	t.Helper()
	return sweepRoundTrip(t, h, opts, false)
}

// sweepRoundTrip is sweep; with roundTrip, the engine is snapshotted and
// restored before every step, as a restart from a checkpoint would.
func sweepRoundTrip(t *testing.T, h *history.History, opts history.Options, roundTrip bool) ([]firing, *Online) {
	t.Helper()
	return sweepWith(t, h, opts, roundTrip, "", nil)
}

// sweepWith is sweepRoundTrip; with stepNow, the engine steps after a
// move of the watermark only when stepNow says so (and always at the
// end), and desc names the case in a step's error.
func sweepWith(t *testing.T, h *history.History, opts history.Options, roundTrip bool, desc string, stepNow func() bool) ([]firing, *Online) {
	t.Helper()
	cfg := OnlineConfig{Evict: sweepEvict, NoClosure: sweepNoClosure}
	// With sweepDurable, bodies spill to a file and a restart is the
	// daemon's: a durable checkpoint, the file copied as it stood, and an
	// engine restored from both.
	var bodyPath, bodyDir string
	restarts := 0
	if sweepDurable {
		bodyDir = t.TempDir()
		bodyPath = filepath.Join(bodyDir, "bodies-0")
		cfg.Bodies = state.NewFileBodies(bodyPath)
	}
	o := NewOnlineConfig(opts, cfg)
	txns := append([]history.Txn(nil), h.Txns...)
	sort.SliceStable(txns, func(i, j int) bool { return txns[i].Start < txns[j].Start })
	var instants []int64
	for _, tx := range txns {
		instants = append(instants, tx.Start+1)
		if e := opts.EffectiveEnd(&tx); e != math.MaxInt64 {
			instants = append(instants, e+2*opts.Skew+1)
		}
	}
	slices.Sort(instants)
	var fired []firing
	next := 0
	closed := map[string]bool{}
	step := func(w int64) {
		if roundTrip && sweepDurable {
			restarts++
			next := filepath.Join(bodyDir, fmt.Sprintf("bodies-%d", restarts))
			o, _, _ = durableCheckpoint(t, o, opts, bodyPath, next, nil)
			bodyPath = next
		} else if roundTrip {
			snap, err := o.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if o, err = RestoreOnline(opts, snap); err != nil {
				t.Fatal(err)
			}
		}
		as, err := o.Step(context.Background())
		if err != nil {
			t.Fatalf("%s: step at %d: %v\n%s", desc, w, err, dump(h))
		}
		for _, a := range as {
			fired = append(fired, firing{w: w, core: append([]string(nil), a.Core...), updated: a.Updated, typ: a.Type})
		}
	}
	for _, w := range instants {
		for next < len(txns) && txns[next].Start < w {
			o.Release(txns[next])
			next++
		}
		for i := 0; i < next; i++ {
			tx := &txns[i]
			if e := opts.EffectiveEnd(tx); !closed[tx.ID] && e != math.MaxInt64 && e+opts.Skew < w-opts.Skew {
				closed[tx.ID] = true
				o.Close(tx.ID)
			}
		}
		if stepNow == nil || stepNow() {
			step(w)
		}
	}
	for next < len(txns) {
		o.Release(txns[next])
		next++
	}
	o.CloseAll()
	step(math.MaxInt64)
	if d := o.Stats().Disagreements; d > 0 {
		t.Errorf("the reduced instance found %d violations the bodies do not confirm\n%s", d, dump(h))
	}
	sweepEvicted += o.Stats().Evicted
	sweepLocal += o.confirmedLocally
	sweepAlerts += len(o.Alerts())
	return fired, o
}

// sweepEvicted counts evictions over a test, so that a test can say that
// it exercised them.
var sweepEvicted int

// sweepLocal and sweepAlerts count, over a test, the alerts confirmed on
// the reduced instance's transactions alone and all alerts.
var sweepLocal, sweepAlerts int

// sweepEvict selects the engine sweep drives: the evicting one, whose
// exactness is the harder claim, unless a test asks for the default.
var sweepEvict = true

// sweepNoClosure runs sweep's engine without the compact closure (its
// answers to "is this order decided" come from solver probes instead).
var sweepNoClosure bool

// sweepDurable makes sweep's restarts durable ones, from a body file.
var sweepDurable bool

// TestOnlineExactnessHistories: the online behaviour docs/SEMANTICS.md §5
// asks of its histories (strict-serializable with session order; Δ, the
// in-doubt horizon and the initial state as each says).
func TestOnlineExactnessHistories(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		skew       int64
		indoubt    int64
		initial    history.InitialState
		// alerts lists the expected first cores in order (nil: no alert).
		alerts [][]string
		// notBefore: no alert may fire at a watermark at or below this.
		notBefore int64
	}{
		{name: "C", text: "W[0,100] w x1 · T[10,20] r x1 · U[30,40] w x2 · R[50,60] r x1", alerts: [][]string{{"R", "T", "U", "W"}}},
		{name: "B", text: "W[0,100] w x1, w y7 · L[10,20] w x2 · R0[30,40] r x2, r y7 · R[50,60] r x1", alerts: [][]string{{"L", "R", "R0", "W"}}},
		{name: "A", text: "W[0,100] w xa, w y7 · L[10,20] w xb · R0[30,40] r xb, r y7 · R[50,60] r xb, r y7"},
		{name: "D", text: "L[0,10] w x1 · X[5,100] r x1, r z3 · U[50,60] w x2, w z3", alerts: [][]string{{"L", "U", "X"}}},
		{name: "E", text: "L[0,10] w x5, w z1 · W[5,100] r z1, w x5, w y7 · R[50,60] r x5, r y7"},
		{name: "S", text: "X[0,100] w x1, w z6 · P[10,20] r x1 (session c) · T[22,30] w z5 (session c) · Q[40,50] r z6", skew: 5, alerts: [][]string{{"P", "Q", "T", "X"}}},
		{name: "F", text: "L1[0,30] w x1, w y7 · L2[10,20] w x2 · R0[21,29] r x2, r y7 · R[50,60] r x1", alerts: [][]string{{"L1", "L2", "R", "R0"}}},
		{name: "K", text: "W1[0,10] w x5 · W3[12,18] w x6 · R[20,30] r x5 · W2[22,28] w x5"},
		{name: "P", text: "P1[0,10] w x1 · P2[5,15] w x2 · P3[20,30] w x3 · R[40,50] r x3"},
		{name: "G", text: "T[10,20] w x1 · U[5,200] w x2 · R2[210,220] r x1"},
		// §2 H: valid while U may end at +∞ ...
		{name: "H", text: "U[0,10] w x1 (unknown) · W[20,30] w x2 · R[40,50] r x1"},
		// ... and invalid once its effects must show by e+0.
		{name: "H-indoubt0", text: "U[0,10] w x1 (unknown) · W[20,30] w x2 · R[40,50] r x1", indoubt: 0, alerts: [][]string{{"R", "U", "W"}}},
		{name: "L1", text: "A[0,10] w x1 · B[0,20] w x2 · R[30,60] r x1 · H[40,50] r x2, w x1"},
		{name: "L2", text: "R[0,90] r x5, r z7 · C[10,40] w x6 · A[20,30] w x5 · D[50,60] w z7 · H[70,80] r x6, w x5"},
		{name: "L3", text: "T1[0,30] w x1 · T2[10,20] w x2 · T3[20,60] r x1 · T4[40,50] r x2", alerts: [][]string{{"T1", "T2", "T3", "T4"}}, notBefore: 60},
		{name: "U1", text: "U[0,30] r x1, w y2 (unknown) · R[40,70] r y2 · W[50,60] w x1"},
		{name: "M1", text: "T1[0,60] w x2 · T2[10,20] w x1 · T3[30,70] r x1 · T4[40,50] r x2 · T5[80,90] r x1", alerts: [][]string{{"T1", "T2", "T4", "T5"}}},
		{name: "M2", text: "T1[0,30] r x1 · T2[10,20] w x1 (unknown) · T3[40,50] r x null", indoubt: 5, alerts: [][]string{{"T1", "T2", "T3"}}},
		{name: "Q1", text: "T1[0,20] w y1, w x3 (unknown) · T2[10,30] w x1 · T3[40,50] r x1, r y1", indoubt: 0},
		{name: "Q2", text: "T1[0,30] w z2 · T2[10,20] w z1 · T3[40,70] r z2 · T4[50,60] w z1"},
		{name: "IR1", text: "T1[0,10] w y3 · T2[5,15] w y1 · T3[20,200] w y1 · T4[30,40] r y1 · T5[50,60] w y2 · T6[70,80] r y1"},
		{name: "CE1", text: "T1[0,10] w x2 (aborted) · T2[20,30] r x2", alerts: [][]string{{"T1", "T2"}}},
		{name: "CE2a", text: "T1[0,50] w x1 · T2[10,20] w x2 · T3[30,60] r x1 · T4[40,90] w x1 (aborted) · T5[70,80] r x2", alerts: [][]string{{"T1", "T2", "T3", "T4", "T5"}}},
		{name: "CE3", text: "T1[0,40] r y2, r x null · T2[10,20] w x2 · T3[30,50] w y2", alerts: [][]string{{"T1", "T2", "T3"}}},
		{name: "CE4", text: "R1[0,100] r x5 · R2[10,20] r x6 · W[30,40] w x5", initial: history.InitialUnknown},
		{name: "QU1", text: "T1[0,10] w x2 · T2[20,30] r x null · T3[40,50] r x null", alerts: [][]string{{"T1", "T2"}}},
		// QU3 (docs/SEMANTICS.md §5): a run may alert {T1,T4,T5} first; this engine
		// finds {T1,T3,T5} (also a core), and then {T2,T4,T6}, which the
		// oracle confirms is a core of what remains: what QU3 guards
		// against is an invalid core after quarantine.
		{name: "QU3", text: "T1[0,20] w x3 · T2[10,40] w x1 · T3[30,60] w x4 · T4[50,70] w x2 · T5[80,100] r x3 · T6[90,110] r x1", alerts: [][]string{{"T1", "T3", "T5"}, {"T2", "T4", "T6"}}},
		{name: "AM1", text: "t1[0,70] r y null, w y3 · t3[10,30] r y3 · t6[40,60] r y4 · t0[20,50] r y null", initial: history.InitialUnknown, alerts: [][]string{{"t0", "t6"}}},
		{name: "QU2", text: "T1[0,10] r y1 · T2[20,30] r y2 · T3[40,50] r y2", initial: history.InitialUnknown, alerts: [][]string{{"T1", "T2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.ParseCompact(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			opts := history.DefaultOptions()
			opts.Level = history.StrictSerializable
			opts.Skew, opts.InitialState = tc.skew, tc.initial
			opts.InDoubt = history.NoInDoubt
			if tc.indoubt != 0 || strings.Contains(tc.name, "Q1") || strings.Contains(tc.name, "indoubt0") {
				opts.InDoubt = tc.indoubt
			}
			for _, evict := range []bool{false, true} {
				sweepEvict = evict
				exactnessCase(t, h, opts, tc.alerts, tc.notBefore)
			}
			sweepEvict = true
		})
	}
}

func exactnessCase(t *testing.T, h *history.History, opts history.Options, alerts [][]string, notBefore int64) {
	t.Helper()
	fired, _ := sweep(t, h, opts)
	var firsts [][]string
	for _, f := range fired {
		if f.updated {
			continue
		}
		c := slices.Sorted(slices.Values(f.core))
		firsts = append(firsts, c)
		if f.w <= notBefore {
			t.Errorf("evict=%v: alert %v at watermark %d, not before %d", sweepEvict, c, f.w, notBefore)
		}
	}
	if !slices.EqualFunc(firsts, alerts, slices.Equal[[]string]) {
		t.Errorf("evict=%v: alerts %v, want %v", sweepEvict, firsts, alerts)
	}
	checkAlertCores(t, h, opts, fired)
}

// checkAlertCores: each alert's latest core is a core of the history
// projected away from the cores alerted before it (oracle.CheckCore).
func checkAlertCores(t *testing.T, h *history.History, opts history.Options, fired []firing) {
	t.Helper()
	latest := map[string][]string{} // first core (joined) -> latest core
	var order []string
	var prevKey string
	for _, f := range fired {
		if !f.updated {
			prevKey = strings.Join(f.core, ",")
			order = append(order, prevKey)
			latest[prevKey] = f.core
			continue
		}
		// An update replaces the core of the alert it updates; updates
		// name the same id, which the firing does not carry: match by
		// subset.
		for k, c := range latest {
			if isSubset(f.core, c) {
				latest[k] = f.core
			}
		}
	}
	_ = prevKey
	var quarantined []string
	for _, k := range order {
		core := latest[k]
		if len(h.Txns) > oracle.MaxTxns+4 {
			break
		}
		var rest []string
		for i := range h.Txns {
			if !slices.Contains(quarantined, h.Txns[i].ID) {
				rest = append(rest, h.Txns[i].ID)
			}
		}
		sub := oracle.Project(h, opts, rest)
		if err := oracle.CheckCore(sub, opts, core); err != nil {
			t.Errorf("alert core %v: %v", core, err)
		}
		quarantined = append(quarantined, strings.Split(k, ",")...)
	}
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// TestOnlineAgreesWithOffline: the first online verdict (any alert) equals
// check's on random tiny histories, and every alert core is a core.
func TestOnlineAgreesWithOffline(t *testing.T) {
	n := tinyCount(300)
	sweepEvicted = 0
	defer func() { t.Logf("%d evictions", sweepEvicted) }()
	for _, c := range []struct {
		skew    int64
		initial history.InitialState
	}{{0, history.InitialEmpty}, {3, history.InitialEmpty}, {0, history.InitialUnknown}, {2, history.InitialUnknown}} {
		skew := c.skew
		rng := rand.New(rand.NewPCG(uint64(skew)+uint64(c.initial)*7, 11))
		cfg := oracle.DefaultTinyConfig()
		cfg.Timestamps, cfg.Sessions, cfg.Lists, cfg.Unknowns, cfg.Aborts = true, true, true, true, true
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.Skew = skew
		opts.InDoubt = 4
		opts.InitialState = c.initial
		for i := 0; i < n; i++ {
			h := oracle.RandomTiny(rng, cfg)
			if h.Validate() != nil {
				continue
			}
			res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
			if err != nil {
				t.Fatal(err)
			}
			fired, _ := sweep(t, h, opts)
			if (len(fired) > 0) != (res.Verdict == incremental.Invalid) {
				t.Fatalf("history %d: online alerts %v, offline %s\n%s", i, fired, res.Verdict, dump(h))
			}
			checkAlertCores(t, h, opts, fired)
			if t.Failed() {
				t.Fatalf("history %d\n%s", i, dump(h))
			}
		}
	}
}

// TestOnlineSnapshotRoundTrip: an engine restored from its snapshot before
// every step raises exactly the alerts, ids included, of one that never
// stopped: a restart from a checkpoint must be invisible.
func TestOnlineSnapshotRoundTrip(t *testing.T) {
	n := tinyCount(100)
	rng := rand.New(rand.NewPCG(5, 17))
	cfg := oracle.DefaultTinyConfig()
	cfg.Timestamps, cfg.Sessions, cfg.Lists, cfg.Unknowns, cfg.Aborts = true, true, true, true, true
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 4
	for i := 0; i < n; i++ {
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		want, wo := sweep(t, h, opts)
		got, go2 := sweepRoundTrip(t, h, opts, true)
		if !slices.EqualFunc(want, got, func(a, b firing) bool {
			return a.w == b.w && slices.Equal(a.core, b.core) && a.updated == b.updated && a.typ == b.typ
		}) {
			t.Fatalf("history %d: uninterrupted %v, restored %v\n%s", i, want, got, dump(h))
		}
		var wantIDs, gotIDs []string
		for _, a := range wo.Alerts() {
			wantIDs = append(wantIDs, a.ID)
		}
		for _, a := range go2.Alerts() {
			gotIDs = append(gotIDs, a.ID)
		}
		if !slices.Equal(wantIDs, gotIDs) {
			t.Fatalf("history %d: ids %v, restored %v", i, wantIDs, gotIDs)
		}
	}
	if _, err := RestoreOnline(opts, []byte(`{"Version":99}`)); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("unknown version accepted: %v", err)
	}
	other := opts
	other.Skew = 7
	snap, _ := NewOnline(opts).Snapshot()
	if _, err := RestoreOnline(other, snap); err == nil {
		t.Fatal("snapshot restored under other options")
	}
}

// TestOnlineGeneratedEvicting: generated histories (blind writes,
// duplicates, unknown outcomes, lists, injected anomalies) through the
// evicting engine agree with check, every alert is a core, the reduced
// instance never disagrees with the bodies, and eviction keeps the window
// small on valid histories.
func TestOnlineGeneratedEvicting(t *testing.T) {
	sweepEvicted, sweepLocal, sweepAlerts = 0, 0, 0
	released := sweepGenerated(t, tinyCount(40), 23, func(i int) int {
		if i%3 == 0 {
			return 1 // a third of them with one injected anomaly
		}
		return 0
	})
	t.Logf("%d of %d transactions evicted; %d of %d alerts confirmed locally", sweepEvicted, released, sweepLocal, sweepAlerts)
	if sweepEvicted < released/4 {
		t.Errorf("only %d of %d transactions evicted", sweepEvicted, released)
	}
	if sweepLocal < sweepAlerts/2 {
		t.Errorf("only %d of %d alerts confirmed on the reduced instance's transactions", sweepLocal, sweepAlerts)
	}
}

// generatedCase is generated history i of a sweep: the presets in turn,
// few keys and sessions, blind writes, duplicates, unknown outcomes and
// lists, minTxns plus up to spanTxns transactions, injected anomalies of
// random types; odd ones under an unknown initial state. rng goes on
// from what drew them.
func generatedCase(t *testing.T, i int, salt uint64, minTxns, spanTxns, injected int) (*history.History, history.Options, gen.Config, *rand.Rand) {
	t.Helper()
	presets := gen.PresetNames()
	types := gen.InjectTypes()
	rng := rand.New(rand.NewPCG(uint64(i), salt))
	cfg, _ := gen.Preset(presets[i%len(presets)])
	cfg.Seed = uint64(i + 1)
	cfg.Txns = minTxns + rng.IntN(spanTxns)
	cfg.Keys = 5 + rng.IntN(30)
	cfg.Sessions = 6
	cfg.Concurrency = 4
	cfg.UnknownRatio = 0.03
	cfg.DupValueRatio = 0.1
	for range injected {
		cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 5_000_000
	if i%2 == 1 {
		opts.InitialState = history.InitialUnknown
	}
	return h, opts, cfg, rng
}

// sweepGenerated drives n generated histories (blind writes, duplicates,
// unknown outcomes, lists, injected[i] anomalies in history i; odd ones
// under an unknown initial state) through the engine and holds every
// first verdict to check's and every alert to being a core. It returns
// the transactions released.
func sweepGenerated(t *testing.T, n int, salt uint64, injected func(i int) int) (released int) {
	t.Helper()
	for i := 0; i < n; i++ {
		h, opts, cfg, _ := generatedCase(t, i, salt, 40, 80, injected(i))
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		fired, o := sweep(t, h, opts)
		if (len(fired) > 0) != (res.Verdict == incremental.Invalid) || t.Failed() {
			t.Fatalf("history %d (%v): online alerts %v, offline %s", i, cfg.Inject, fired, res.Verdict)
		}
		checkAlertCores(t, h, opts, fired)
		released += o.Stats().Released
	}
	return released
}

package online

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/solver"
)

// TestStepClosureSound: every order the step's closure claims is one that
// every completion of the instance has: the solver, given the opposite
// edge, finds no model. Generated read-modify-write streams with
// duplicates and unknown outcomes, checked at every step on random pairs
// the closure orders (and a few it does not, which must then have a model
// ordering them the other way or be orders the closure cannot see).
func TestStepClosureSound(t *testing.T) {
	for _, preset := range []string{"mixed", "blindw-rw", "storm"} {
		var h *history.History
		if preset == "storm" {
			// Injected anomalies: alerts quarantine members (in place or
			// by replay), and no order through them may be claimed after
			// (the closure is built from the step's instance, which no
			// longer holds their constraints).
			cfg, err := gen.Preset("mixed")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Txns, cfg.Sessions, cfg.OpsPerTxn, cfg.Keys = 1500, 32, 8, 200
			cfg.ListRatio, cfg.UnknownRatio, cfg.InjectRate = 0, 0.01, 0.02
			if h, _, err = gen.Generate(cfg); err != nil {
				t.Fatal(err)
			}
		} else {
			h = probeHistory(t, preset, 1500, 200)
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.InDoubt = 5_000_000
		txns := byStart(h)
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 2))
		checked := 0
		feedInStartOrder(o, opts, txns, func(i int) {
			if (i+1)%50 != 0 {
				return
			}
			if r, sc := stepClosureOf(t, o, ctx); sc != nil {
				var nodes []solver.Node
				for tx := range r.h.Txns {
					if n := r.e.Node()[tx]; n >= 0 {
						nodes = append(nodes, n)
					}
				}
				s := r.e.Solver()
				for k := 0; k < 200 && len(nodes) > 1; k++ {
					a, b := nodes[rng.IntN(len(nodes))], nodes[rng.IntN(len(nodes))]
					if a == b || !sc.reaches(a, b) {
						continue
					}
					if st := solveOpposite(ctx, s, a, b); st != solver.Unsat {
						t.Fatalf("%s at %d: the closure orders node %d before %d, but a completion has the other order (%v)", preset, i+1, a, b, st)
					}
					checked++
				}
			}
			if _, err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if checked == 0 {
			t.Fatalf("%s: no order checked", preset)
		}
		if preset == "storm" {
			if o.Stats().Alerts == 0 {
				t.Fatalf("storm: no alert, so no quarantine was exercised")
			}
		}
		t.Logf("%s: %d orders checked, %d builds, %d alerts", preset, checked, o.Stats().Closure.Builds, o.Stats().Alerts)
	}
}

// stepClosureOf builds o's instance and, if it is satisfiable, the
// closure as the step's prober builds it at its first question (nil
// otherwise).
func stepClosureOf(t *testing.T, o *Online, ctx context.Context) (*reduced, *stepClosure) {
	t.Helper()
	r := o.build()
	if len(r.h.Txns) == 0 || r.solve(ctx) != solver.Sat {
		return r, nil
	}
	sc := o.buildStepClosure(r)
	if sc == nil {
		t.Fatal("the instance's fixed orders close a cycle in the step's closure")
	}
	return r, sc
}

// solveOpposite solves s with the edge b -> a added for this solve only:
// Unsat means a precedes b in every model.
func solveOpposite(ctx context.Context, s *solver.Solver, a, b solver.Node) solver.Status {
	sel := s.NewSelector()
	s.AddEdge(sel, b, a)
	st := s.Solve(ctx, sel)
	s.AddClause(sel.Not())
	return st
}

// TestClosureOnOff runs one generated stream with the closure in the
// eviction loop and without it: both runs must be exact (no alert on a
// valid stream, no disagreement between the instance and the bodies).
// It logs the window, the probes spent and the orders the closure proved;
// STREAMCHECK_CLOSURE_TXNS sets the stream's length (the BENCHMARKS.md
// comparison: go test ./online -run TestClosureOnOff -v with 100000).
func TestClosureOnOff(t *testing.T) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_CLOSURE_TXNS")); err == nil && v > 0 {
		n = v
	}
	// Registers only (lists pin their writers): read-modify-write with
	// the preset's duplicates, 1% unknown outcomes.
	cfg, err := gen.Preset("mixed")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.OpsPerTxn, cfg.Keys = n, 32, 8, 5000
	cfg.ListRatio, cfg.UnknownRatio = 0, 0.01
	regs, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f := os.Getenv("STREAMCHECK_CLOSURE_FILE"); f != "" {
		// A recorded stream instead (its first n transactions).
		if regs, _, err = ingest.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		regs.Txns = regs.Txns[:min(n, len(regs.Txns))]
	}
	indoubt := int64(5_000_000)
	if v, err := time.ParseDuration(os.Getenv("STREAMCHECK_CLOSURE_INDOUBT")); err == nil {
		indoubt = v.Nanoseconds()
	}
	modes := []bool{true, false}
	switch os.Getenv("STREAMCHECK_CLOSURE") {
	case "on":
		modes = modes[:1]
	case "off":
		modes = modes[1:]
	}
	for _, on := range modes {
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.InDoubt = indoubt
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true, NoClosure: !on})
		ctx := context.Background()
		t0, c0 := time.Now(), cpuNanos()
		maxWindow := 0
		feedInStartOrder(o, opts, byStart(regs), func(i int) {
			if (i+1)%256 == 0 {
				if _, err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
				maxWindow = max(maxWindow, o.Stats().Window)
			}
		})
		o.CloseAll()
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		st := o.Stats()
		t.Logf("closure %v: %d txns, %v wall, %.2f CPU s, max window %d, %d evicted, probes %d, closure hits %d (around an unknown %d), builds %d",
			on, len(regs.Txns), time.Since(t0).Round(time.Millisecond), float64(cpuNanos()-c0)/1e9, maxWindow, st.Evicted, st.Closure.Probes, st.Closure.Hits, st.Closure.Around, st.Closure.Builds)
		// The switch must switch: on, the closure answers questions
		// (this stream asks thousands); off, it answers none and is
		// never built.
		if on && (st.Closure.Hits == 0 || st.Closure.Builds == 0) {
			t.Errorf("closure on: %d hits, %d builds", st.Closure.Hits, st.Closure.Builds)
		}
		if !on && st.Closure.Hits+st.Closure.Around+st.Closure.Builds != 0 {
			t.Errorf("closure off: %+v", st.Closure)
		}
		if st.Alerts != 0 || st.Disagreements != 0 {
			t.Errorf("closure %v: %d alerts, %d disagreements on a valid stream", on, st.Alerts, st.Disagreements)
		}
	}
}

// TestClosureBuiltWhenAsked: the closure is built at a step's first
// order question and only then (docs/SEMANTICS.md §5 "The closure built
// at a step's first question"). One session of blind writes to one key,
// each ending before the next starts: every order eviction needs is real
// time, which the instance answers itself, so no step asks and none may
// build. The read-modify-write stream of TestClosureOnOff asks at many
// steps: the closure must be built and answer, at most once a step.
func TestClosureBuiltWhenAsked(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	var blind []history.Txn
	for i := range 600 {
		start := int64(i) * 1_000_000
		blind = append(blind, history.Txn{ID: "b" + strconv.Itoa(i), Session: "s", HasSession: true,
			HasTime: true, Start: start, End: start + 100_000, Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: "x", Value: history.Value(strconv.Itoa(i + 1))}}})
	}
	cfg, err := gen.Preset("mixed")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.OpsPerTxn, cfg.Keys = 3000, 32, 8, 5000
	cfg.ListRatio, cfg.UnknownRatio = 0, 0.01
	rmw, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		txns  []history.Txn
		asked bool
	}{{"blind", blind, false}, {"rmw", byStart(rmw), true}} {
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		ctx := context.Background()
		feedInStartOrder(o, opts, tc.txns, func(i int) {
			if (i+1)%64 == 0 {
				if _, err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
		o.CloseAll()
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		st := o.Stats()
		t.Logf("%s: %d steps, %d evicted, closure %+v", tc.name, st.Steps, st.Evicted, st.Closure)
		if st.Alerts != 0 || st.Disagreements != 0 || st.Evicted == 0 {
			t.Fatalf("%s: %d alerts, %d disagreements, %d evicted", tc.name, st.Alerts, st.Disagreements, st.Evicted)
		}
		if !tc.asked && st.Closure.Builds != 0 {
			t.Errorf("%s: no step asks an order question, yet the closure was built %d times", tc.name, st.Closure.Builds)
		}
		if tc.asked && (st.Closure.Builds == 0 || st.Closure.Hits == 0 || st.Closure.Builds > st.Steps) {
			t.Errorf("%s: %d builds over %d steps, %d hits: want at least one, at most one a step", tc.name, st.Closure.Builds, st.Steps, st.Closure.Hits)
		}
	}
}

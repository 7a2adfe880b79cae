package incremental

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestValidSetsAsBefore holds C6 (core_valid.go) to the search that asks
// every check: the same verdicts, anomalies and deadline flags on
// generated histories with several injected anomalies, with and without
// time, at the serializable, snapshot and pl-2+ levels, with windows
// small enough that every round of collectCores walks several. Every
// answer the memory gives is checked as well (recheckValidSets panics on
// a mismatch), and the memory must spare some checks, or the test
// compares nothing.
func TestValidSetsAsBefore(t *testing.T) {
	defer func(w int) { firstWindow = w }(firstWindow)
	defer func() { recheckValidSets = false }()
	anomalies, saved := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		firstWindow = []int{16, 32, 64}[seed%3]
		g := gen.Config{Txns: 150 + 50*int(seed%3), Keys: 8 + int(seed%3)*8, Seed: seed, Sessions: 6, OpsPerTxn: 2 + int(seed%3),
			AbortRatio: 0.03, DupValueRatio: 0.1 * float64(seed%2), Concurrency: 4, InjectRate: 0.02 + 0.01*float64(seed%3)}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		cases := append(timedAndUntimed(h), reportCase{withoutTime(h), history.PL2Plus})
		recheckValidSets = false
		n, s := reportsAsBefore(t, seed, cases, func(old bool) { noValidSets = old })
		anomalies += n
		saved += s
		recheckValidSets = true
		reportsAsBefore(t, seed, cases, func(old bool) { noValidSets = old })
	}
	t.Logf("%d anomalies, %d checks spared", anomalies, saved)
	if anomalies == 0 || saved <= 0 {
		t.Fatalf("%d anomalies, %d checks spared: the test compares nothing", anomalies, saved)
	}
}

// TestValidSetsCoverIsSubset: covers answers "inside a set added" exactly,
// against a naive subset test, on random sets over up to 200 members.
func TestValidSetsCoverIsSubset(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		n := 1 + r.IntN(200)
		var v validSets
		var added [][]bool
		for k := 0; k < 1+r.IntN(5); k++ {
			s := make([]bool, n)
			for i := range s {
				s[i] = r.IntN(3) != 0
			}
			v.add(s)
			added = append(added, s)
		}
		for q := 0; q < 20; q++ {
			m := make([]bool, n)
			base := added[r.IntN(len(added))]
			for i := range m {
				m[i] = base[i] && r.IntN(4) != 0
			}
			if r.IntN(2) == 0 { // often one member outside
				m[r.IntN(n)] = true
			}
			want := false
			for _, s := range added {
				sub := true
				for i := range m {
					if m[i] && !s[i] {
						sub = false
						break
					}
				}
				want = want || sub
			}
			if got := v.covers(m); got != want {
				t.Fatalf("round %d query %d: covers %v, naive %v", round, q, got, want)
			}
		}
	}
}

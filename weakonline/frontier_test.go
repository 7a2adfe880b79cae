package weakonline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// Every key's log trims as soon as it may, in every test of the package:
// the short histories of the tests would never reach the default.
func init() { minLog = 0 }

// TestFrontierAsNaive: forcedCausal visiting only the writes at or after
// its source's frontier (docs/SEMANTICS.md §5 "A read visits the writes
// after its source's frontier") raises the alerts, and makes the steps
// check, that visiting every session of the key does.
func TestFrontierAsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 5005))
	injects := [][]string{nil, {history.G1c}, {history.ReadSkew}, {history.LostUpdate}}
	alerted := 0
	for i := range count(24) {
		h, err := generated(rng, 4*i, []string{"", "causal", "read-atomic"}[i%3], injects[i%len(injects)])
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.Causal
		if i%5 == 3 {
			opts.InitialState = history.InitialUnknown
		}
		fd := randomFeed(rng, h, []int64{1_000_000, 5_000_000, 50_000_000})
		got, e := runFeed(t, h, opts, fd)
		naiveFrontier = true
		want, ne := runFeed(t, h, opts, fd)
		naiveFrontier = false
		sameAlerts(t, fmt.Sprintf("stream %d frontier vs every session", i), got, want)
		if e.checks != ne.checks {
			t.Fatalf("stream %d: %d steps checked, %d visiting every session", i, e.checks, ne.checks)
		}
		if len(got) > 0 {
			alerted++
		}
	}
	if alerted == 0 {
		t.Fatal("no stream alerted: the comparison tests nothing")
	}
	t.Logf("%d streams alerted", alerted)
}

package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestVboxSettleNaiveCaught shows that the brute-force sweep of
// TestVboxPruneAgainstBruteForce can fail on V1c (vboxSettle,
// docs/SEMANTICS.md §3): each naive version of the rule must disagree
// with the oracle on some history of the same generator, and the rule
// itself on none of them. The first disagreement found is printed, so
// that it can be kept as a fixed regression history below.
func TestVboxSettleNaiveCaught(t *testing.T) {
	for _, naive := range []struct {
		name string
		mode int
	}{{"one-literal", naiveOneLiteral}} {
		t.Run(naive.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(27, 4))
			opts := history.DefaultOptions()
			opts.Level = history.Serializable
			caught := ""
			for i := 0; i < 4*tinyCount(400) && caught == ""; i++ {
				text := randomVboxText(rng)
				h, err := history.ParseCompact(text)
				if err != nil || h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				vboxSettleNaive = naive.mode
				res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 1, noStricter: true})
				vboxSettleNaive = 0
				switch {
				case err != nil:
					caught = err.Error() + "\n" + text
				case (res.Verdict == Valid) != want:
					caught = text
				}
			}
			if caught == "" {
				t.Fatalf("no history of the sweep tells the naive %s rule from the oracle", naive.name)
			}
			t.Logf("naive %s rule disagrees with the oracle on:\n%s", naive.name, caught)
		})
	}
}

// TestVboxSettleRegression keeps the history the sweep above found for
// the naive one-literal rule: T1 and T4 both write x=1, so T3's and T5's
// reads of x=1 have two candidate writers and their rw edges carry their
// read-from literal as well as the writers' order. Fixing the order
// alone (the naive rule) cut a model the read-from choice allowed, and
// the instance became unsatisfiable; the rule's two-literal lemma keeps
// the history valid, as the oracle says.
func TestVboxSettleRegression(t *testing.T) {
	const text = `T3 r x 1, w x 2
T5 r x 1, w x 3 (session s1)
T4 r x 2, w x 1
T6 w x 4 (session s0)
T1 r x null, w x 1 (session s0)
T2 w y 1
T0 r x null, r y null`
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.Serializable
	want, _, err := oracle.Check(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !want {
		t.Fatal("the oracle should find the history valid")
	}
	e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
	e.encode()
	if e.vbox == nil || e.vbox.settled == 0 {
		t.Fatalf("V1c added no lemma on the regression history")
	}
	res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 1, noStricter: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Valid {
		t.Fatalf("verdict %s, the oracle says valid", res.Verdict)
	}
	if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
		t.Fatalf("witness %v: %v", res.Witness, err)
	}
	vboxSettleNaive = naiveOneLiteral
	defer func() { vboxSettleNaive = 0 }()
	res, err = Check(context.Background(), h, opts, Config{MaxAnomalies: 1, noStricter: true})
	if err == nil && res.Verdict == Valid {
		t.Fatal("the naive one-literal rule passes the regression history: the test no longer tells it apart")
	}
}

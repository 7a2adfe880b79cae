package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// siVboxLevels are the levels of the family without real time: V1 runs
// there (vbox_si.go). GSI and strong SI need timestamps (Validate), and
// with them order writers by time (orderByTimeSI); their tiny-history
// sweeps (TestSIAgainstBruteForce, TestSIPruneDifferential) check that V1
// stays off there.
var siVboxLevels = []history.Level{history.SnapshotIsolation, history.StrongSessionSnapshotIsolation}

// TestVboxSIAgainstBruteForce holds V1 on begin and commit nodes
// (vbox_si.go; docs/SEMANTICS.md §3 "V1 on begin and commit nodes") to
// the brute-force oracle's begin/commit enumeration at the levels of the
// family without real time, with pruning on and off: same verdict, every witness replays,
// every first core passes the core check. The histories are, by turns,
// randomVboxText's (serial executions: forced reads building known paths
// across keys, repeated values, unknown outcomes, sessions) and
// randomSIText's (SI executions: concurrent snapshots, write skews,
// first-committer-wins aborts), all without timestamps. At
// snapshot-isolation each history is checked a third time with
// sessionFirst on (strong session SI tried first): same verdict, its
// witness replays at SI, and it must settle some valid histories but
// not all (some are valid at SI only). It fails if
// the sweep does not exercise V1's outcomes at a level (pairs decided by
// a known path, through a forced reader, edges left to a nearer writer,
// V1c lemmas) or lacks valid or invalid histories.
// STREAMCHECK_TINY=10000 is the long run.
func TestVboxSIAgainstBruteForce(t *testing.T) {
	for ci, lv := range siVboxLevels {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 2427))
			opts := history.DefaultOptions()
			opts.Level = lv
			var valid, invalid, decided, forced, covered, settled, bySession int
			for i := 0; i < 2*tinyCount(300); i++ {
				text := randomVboxText(rng)
				if i%2 == 1 {
					text = randomSIText(rng)
				}
				h, err := history.ParseCompact(text)
				if err != nil || h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				prunedAndPlainAgree(t, h, opts, want, i, text, true)
				if lv == history.SnapshotIsolation {
					// sessionFirst: strong session SI tried first.
					res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 1})
					if err != nil {
						t.Fatalf("%v\n%s", err, text)
					}
					if got := res.Verdict == Valid; got != want {
						t.Fatalf("history %d (session first): checker valid=%v, oracle %v\n%s", i, got, want, text)
					}
					if want {
						if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
							t.Fatalf("history %d (session first): witness %v: %v\n%s", i, res.Witness, err, text)
						}
					}
					if res.Stats.ByStricter {
						bySession++
					}
				}
				if want {
					valid++
				} else {
					invalid++
				}
				e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
				e.encode()
				if e.vbox != nil {
					decided += e.vbox.decided
					forced += e.vbox.forced
					covered += e.vbox.covered
					settled += e.vbox.settled
				}
			}
			t.Logf("%d valid, %d invalid; V1 decided %d pairs by known paths, %d through forced readers, left %d edges to nearer writers; V1c added %d lemmas; %d settled by strong session SI first", valid, invalid, decided, forced, covered, settled, bySession)
			if lv == history.SnapshotIsolation && (bySession == 0 || bySession == valid) {
				t.Fatalf("sessionFirst settled %d of %d valid histories: none, or every one (then no SI-only history was met)", bySession, valid)
			}
			if valid < 20 || invalid < 20 || decided == 0 || forced == 0 || covered == 0 || settled == 0 {
				t.Fatalf("the sweep does not exercise V1: %d valid, %d invalid, decided %d, forced %d, covered %d, V1c lemmas %d", valid, invalid, decided, forced, covered, settled)
			}
		})
	}
}

// TestVboxSIGenerated is V1's differential on generated histories without
// timestamps: gen's histories valid
// at strong session SI (write skews included) and the same with injected
// anomalies that SI forbids, checked with pruning on and off. Both must
// give the expected verdict, every core must pass the oracle's core
// check, and V1 must decide most pairs (it fails if V1 decided nothing).
// STREAMCHECK_SIVBOX_COUNT and STREAMCHECK_SIVBOX_TXNS scale it up.
func TestVboxSIGenerated(t *testing.T) {
	count := envInt("STREAMCHECK_SIVBOX_COUNT", 4)
	txns := envInt("STREAMCHECK_SIVBOX_TXNS", 600)
	if testing.Short() {
		count = 2
	}
	for i := 0; i < count; i++ {
		cfg, err := gen.Preset("mixed")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Seed = uint64(i + 1)
		cfg.Txns = txns
		cfg.Keys = 100 + 50*i
		cfg.ValidAt = history.StrongSessionSnapshotIsolation.String()
		injected := i%2 == 1
		if injected {
			cfg.Inject = []string{"lost-update", "G-single", "read-skew"}
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for j := range h.Txns {
			h.Txns[j].HasTime, h.Txns[j].Start, h.Txns[j].End = false, 0, 0
		}
		for _, lv := range siVboxLevels {
			opts := history.DefaultOptions()
			opts.Level = lv
			var verdicts [2]Verdict
			var pairs [2]int
			for j, noPrune := range []bool{false, true} {
				res, err := Check(context.Background(), h, opts, Config{NoPrune: noPrune, noStricter: true})
				if err != nil {
					t.Fatal(err)
				}
				verdicts[j], pairs[j] = res.Verdict, res.Stats.Pairs
				for _, a := range res.Anomalies {
					if err := oracle.CheckCore(h, opts, a.Core); err != nil {
						t.Errorf("history %d at %s, NoPrune=%v: core %v: %v", i, lv, noPrune, a.Core, err)
					}
				}
			}
			want := Valid
			if injected {
				want = Invalid
			}
			if verdicts[0] != want || verdicts[1] != want {
				t.Fatalf("history %d at %s (injected=%v): pruned %s, plain %s, want %s", i, lv, injected, verdicts[0], verdicts[1], want)
			}
			e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
			e.encode()
			if e.vbox == nil || e.vbox.decided == 0 {
				t.Fatalf("history %d at %s: V1 decided nothing", i, lv)
			}
			t.Logf("history %d at %s: %s; V1 decided %d pairs, %d through forced readers; %d pairs drawn pruned, %d plain", i, lv, verdicts[0], e.vbox.decided, e.vbox.forced, pairs[0], pairs[1])
		}
	}
}

// randomSIText is a tiny history without timestamps from a random
// snapshot-isolation execution, shaped for V1 on begin and commit nodes:
// four to seven transactions over two or three registers begin and
// commit in a random interleaving, read their snapshot (or their own
// write), and abort when a key they write was committed by another after
// their begin (first committer wins; the loser is listed as aborted or
// left out). So write skews and concurrent snapshots are common, and
// forced reads give known paths into begin nodes that a serial execution
// never makes. About one read in six is replaced by another value of its
// key, values repeat now and then, and a few transactions are unknown or
// in one of two sessions; transactions are listed in a shuffled order.
func randomSIText(rng *rand.Rand) string {
	n := 4 + rng.IntN(4)
	keys := []string{"x", "y", "z"}[:2+rng.IntN(2)]
	type op struct {
		read bool
		key  string
		val  int
	}
	plans := make([][]op, n)
	next := map[string]int{}
	for i := range plans {
		for j := 0; j < 1+rng.IntN(3); j++ {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(2) == 0 {
				plans[i] = append(plans[i], op{read: true, key: k})
				continue
			}
			v := next[k] + 1
			if next[k] > 0 && rng.IntN(8) == 0 {
				v = 1 + rng.IntN(next[k]) // a repeated value
			} else {
				next[k] = v
			}
			plans[i] = append(plans[i], op{key: k, val: v})
		}
	}
	// Events: 2i is i's begin, 2i+1 its commit; shuffle keeping each
	// begin before its commit.
	ev := rng.Perm(2 * n)
	for i := range ev {
		ev[i] = ev[i] / 2 * 2
	}
	seen := map[int]bool{}
	for i, x := range ev {
		if seen[x] {
			ev[i] = x + 1
		}
		seen[x] = true
	}
	state := map[string]int{}
	lastCommit := map[string]int{} // key -> event index of its last commit
	snap := make([]map[string]int, n)
	began := make([]int, n)
	aborted := make([]bool, n)
	for at, x := range ev {
		t := x / 2
		if x%2 == 0 {
			snap[t] = map[string]int{}
			for k, v := range state {
				snap[t][k] = v
			}
			began[t] = at
			continue
		}
		for _, o := range plans[t] {
			if !o.read && lastCommit[o.key] > began[t] {
				aborted[t] = true
			}
		}
		if aborted[t] {
			continue
		}
		for _, o := range plans[t] {
			if !o.read {
				state[o.key], lastCommit[o.key] = o.val, at
			}
		}
	}
	var b strings.Builder
	first := true
	for _, i := range rng.Perm(n) {
		if aborted[i] && rng.IntN(2) == 0 {
			continue
		}
		own := map[string]int{}
		var ops []string
		for _, o := range plans[i] {
			if !o.read {
				own[o.key] = o.val
				ops = append(ops, fmt.Sprintf("w %s %d", o.key, o.val))
				continue
			}
			v, ok := own[o.key]
			if !ok {
				v = snap[i][o.key]
			}
			if rng.IntN(6) == 0 {
				v = rng.IntN(next[o.key] + 1)
			}
			if v == 0 {
				ops = append(ops, "r "+o.key+" null")
			} else {
				ops = append(ops, fmt.Sprintf("r %s %d", o.key, v))
			}
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		fmt.Fprintf(&b, "T%d %s", i, strings.Join(ops, ", "))
		switch {
		case aborted[i]:
			b.WriteString(" (aborted)")
		case rng.IntN(12) == 0:
			b.WriteString(" (unknown)")
		case rng.IntN(5) == 0:
			fmt.Fprintf(&b, " (session s%d)", rng.IntN(2))
		}
	}
	return b.String()
}

// TestVboxSIWWThroughCommit is the history where V1a's ww edge is the
// only witness of the anomaly: the known path from a to l reaches l's
// commit and not its begin, through an rw edge V1b drew (q reads l's k
// and w's u, so w precedes l; r reads w's k and a's v, so r's snapshot
// precedes l's commit). a and l both write j, so a committed before l
// began; l's snapshot misses s's y, and a read s's z: C_a -> B_l -> C_s
// -> B_a -> C_a. Leaving out the ww edge of a decided pair whose path
// does not reach the begin node makes it valid; the oracle says invalid.
func TestVboxSIWWThroughCommit(t *testing.T) {
	text := "W w k 1, w u 1\nL w k 2, w j 2, r y null\nQ r k 2, r u 1\nR r k 1, r v 1\nA w j 1, w v 1, r z 1\nS w y 1, w z 1"
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range siVboxLevels {
		opts := history.DefaultOptions()
		opts.Level = lv
		want, _, err := oracle.Check(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if want {
			t.Fatalf("%s: the oracle calls it valid", lv)
		}
		res, err := Check(context.Background(), h, opts, Config{noStricter: true})
		if err != nil {
			t.Fatal(err)
		}
		e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
		e.encode()
		if e.vbox == nil || e.vbox.forced == 0 || e.vbox.decided == 0 {
			t.Fatalf("%s: V1b or V1a did not fire (%+v)", lv, e.vbox)
		}
		if res.Verdict != Invalid {
			t.Fatalf("%s: checker says %s, oracle invalid", lv, res.Verdict)
		}
	}
}

// TestVboxSIForcedSnapshot is the valid history that V1b would reject if
// it asked for a known path to a forced reader's commit instead of its
// begin. V1b orders W before L (Q reads L's k and W's u) and draws R's
// rw edge to L's commit (R reads W's k); X reaches C_L through R (R
// reads X's v) but not L's snapshot, and L reads B's m. "X before B"
// would leave P (which reads X's m) only D's n, and D cannot commit; the
// schedule B, W, begin L, X, begin R, commit L, Q, P is SI.
func TestVboxSIForcedSnapshot(t *testing.T) {
	text := "W w k 1, w u 1\nL w k 2, r m 1\nQ r k 2, r u 1\nR r k 1, r v 1\nX w v 1, w m 2\nB w m 1, w n 7\nP r m 2, r n 7\nD w n 7, r zz 5 (unknown)"
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range siVboxLevels {
		opts := history.DefaultOptions()
		opts.Level = lv
		want, _, err := oracle.Check(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !want {
			t.Fatalf("%s: the oracle calls it invalid", lv)
		}
		res, err := Check(context.Background(), h, opts, Config{noStricter: true})
		if err != nil {
			t.Fatal(err)
		}
		e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
		e.encode()
		if e.vbox == nil || e.vbox.forced == 0 || e.vbox.rounds < 2 {
			t.Fatalf("%s: V1b did not fire in two rounds (%+v)", lv, e.vbox)
		}
		if res.Verdict != Valid {
			t.Fatalf("%s: checker says %s, oracle valid", lv, res.Verdict)
		}
		if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
			t.Fatalf("%s: witness %v: %v", lv, res.Witness, err)
		}
	}
}

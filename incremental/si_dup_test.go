package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// siDupCounts sums the duplicate-value rules' counters (si_dup.go) of the
// fast-path instance Check builds for h, so that a sweep can show each
// rule fired.
type siDupCounts struct{ sd1, sd1pairs, sb, sd3, sd4 int }

func (c *siDupCounts) add(h *history.History, opts history.Options) {
	e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
	e.encode()
	if d := e.si.dup; d != nil {
		c.sd1 += d.sd1
		c.sd1pairs += d.sd1pairs
		c.sb += d.sb
		c.sd3 += d.sd3
		c.sd4 += d.sd4
	}
}

// TestSIDupAgainstBruteForce holds the duplicate-value rules of the
// snapshot levels (docs/SEMANTICS.md §3, "Duplicate values on begin and
// commit nodes") to the brute-force oracle's begin/commit enumeration:
// on tiny histories of blind writers, readers and read-modify-writes over
// a one- or two-value domain (uniform keys and mixed ones, unknown and
// aborted outcomes, sessions, timestamps), Check with pruning on and off
// agrees with the oracle at every level of the family, under both
// initial states; every witness replays (the blind writers' begins moved
// next to their commits) and every first core is a core. It fails if a
// rule never fires, so the rules are held to the oracle and not
// bypassed. STREAMCHECK_TINY=10000 is the long run.
func TestSIDupAgainstBruteForce(t *testing.T) {
	ci := 0
	for _, d := range history.Levels() {
		lv := d.Level
		if !lv.BeginCommit() {
			continue
		}
		for _, initial := range []history.InitialState{history.InitialEmpty, history.InitialUnknown} {
			ci++
			seed := uint64(ci)
			t.Run(fmt.Sprintf("%s/init=%s", lv, initial), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 2424))
				opts := history.DefaultOptions()
				opts.Level, opts.InitialState = lv, initial
				var valid, invalid int
				var c siDupCounts
				for i := 0; i < tinyCount(300); i++ {
					text := randomDupText(rng, lv.RealTime() || i%2 == 0)
					h, err := history.ParseCompact(text)
					if err != nil || h.Validate() != nil {
						continue
					}
					want, _, err := oracle.Check(h, opts)
					if err != nil {
						t.Fatal(err)
					}
					prunedAndPlainAgree(t, h, opts, want, i, text, i%3 != 1)
					if want {
						valid++
					} else {
						invalid++
					}
					c.add(h, opts)
				}
				t.Logf("%d valid, %d invalid; SD1 %d reads and %d pairs, SB %d pairs, SD3 %d reads, SD4 %d reads", valid, invalid, c.sd1, c.sd1pairs, c.sb, c.sd3, c.sd4)
				settles := lv.SessionOrder() || lv.SnapshotRealTime()
				if valid == 0 || invalid == 0 || c.sd1 == 0 || c.sd1pairs == 0 || c.sb == 0 {
					t.Fatalf("the sweep does not exercise the rules: %d valid, %d invalid, %+v", valid, invalid, c)
				}
				if initial == history.InitialEmpty && (c.sd4 == 0 || (settles && c.sd3 == 0)) {
					t.Fatalf("the sweep does not exercise SD3/SD4: %+v", c)
				}
			})
		}
	}
}

// dupBlindText is issue 24's duplicate cliff in small: w blind writers of
// x = 1 and r readers of it, one session each. With stale, one more
// transaction reads x = 1 and y = null while every writer also writes y
// = 1: no snapshot holds a writer's x and none's y, at any level.
// Timestamps, when set, overlap so that time orders nothing.
func dupBlindText(w, r int, stale, timestamps bool) string {
	var b strings.Builder
	ts := ""
	if timestamps {
		ts = "[0,100]"
	}
	for i := 0; i < w; i++ {
		y := ""
		if stale {
			y = ", w y 1"
		}
		fmt.Fprintf(&b, "W%d%s w x 1%s (session w%d)\n", i, ts, y, i)
	}
	for i := 0; i < r; i++ {
		fmt.Fprintf(&b, "R%d%s r x 1 (session r%d)\n", i, ts, i)
	}
	if stale {
		fmt.Fprintf(&b, "S%s r x 1, r y null (session s)\n", ts)
	}
	return strings.TrimSpace(b.String())
}

// TestSIDupCliff checks the dup shape at every level of the family: the
// fast path's instance has no order variable and no read-from literal per
// writer (SB and SD4 fired, no pair), valid without the stale reader and
// invalid with it; the witness replays. A small instance, so that the
// plain encoding (NoPrune) can be compared too.
func TestSIDupCliff(t *testing.T) {
	for _, d := range history.Levels() {
		lv := d.Level
		if !lv.BeginCommit() {
			continue
		}
		for _, stale := range []bool{false, true} {
			text := dupBlindText(12, 12, stale, lv.RealTime())
			h, err := history.ParseCompact(text)
			if err != nil {
				t.Fatal(err)
			}
			opts := history.DefaultOptions()
			opts.Level = lv
			e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
			e.encode()
			if dd := e.si.dup; dd == nil || dd.sb == 0 || dd.sd4 == 0 || len(e.pairsL) != 0 {
				t.Fatalf("%s stale=%v: rules did not fire (pairs %d, state %+v)", lv, stale, len(e.pairsL), dd)
			}
			for _, noPrune := range []bool{false, true} {
				res, err := Check(context.Background(), h, opts, Config{NoPrune: noPrune, noStricter: true})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Verdict == Valid; got == stale {
					t.Fatalf("%s stale=%v NoPrune=%v: verdict %s", lv, stale, noPrune, res.Verdict)
				}
				if !stale {
					if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
						t.Fatalf("%s NoPrune=%v: witness: %v", lv, noPrune, err)
					}
				} else if len(res.Anomalies) == 0 || !slices.Contains(res.Anomalies[0].Core, "S") {
					t.Fatalf("%s NoPrune=%v: core %v should hold the stale reader", lv, noPrune, res.Anomalies)
				}
			}
		}
	}
}

// TestSIDupSettleOnlyBySnapshotOrder pins SD3's two conditions with
// histories the random sweep rarely builds, each valid at its level (the
// oracle agrees) and judged invalid if SD3 settles where it must not:
//   - under GSI real time orders commits, not snapshots: R's snapshot may
//     precede U's commit though U ended before R began, so U does not
//     settle R's read of x (R reads W's x and y's initial version);
//   - a settling writer must be committed in every model: U, of unknown
//     outcome, is before R in R's session (and at strong SI in real time
//     too), and R's read of y = null says U did not commit.
func TestSIDupSettleOnlyBySnapshotOrder(t *testing.T) {
	for _, c := range []struct {
		level history.Level
		text  string
	}{
		{history.GeneralizedSnapshotIsolation, "U[0,10] w x 1, w y 1\nW[0,100] w x 1\nR[20,30] r x 1, r y null"},
		{history.StrongSessionSnapshotIsolation, "U w x 1, w y 1 (unknown, session s)\nW w x 1 (session w)\nR r x 1, r y null (session s)"},
		{history.StrongSnapshotIsolation, "U[0,10] w x 1, w y 1 (unknown, session s)\nW[0,100] w x 1 (session w)\nR[20,30] r x 1, r y null (session s)"},
	} {
		h, err := history.ParseCompact(c.text)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = c.level
		if c.level == history.StrongSnapshotIsolation {
			opts.InDoubt = 0 // U's commit, if any, at its end: before R begins
		}
		want, _, err := oracle.Check(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !want {
			t.Fatalf("%s: the oracle says invalid; the test expects valid\n%s", c.level, c.text)
		}
		prunedAndPlainAgree(t, h, opts, want, 0, c.text, true)
	}
}

// TestSIDupBlindPairCoversNothing pins the one place SB meets V1a's
// cover (vboxKeySI): an SB pair (A, B) draws no ww edge, so B must not
// excuse A's edges. Here A and B are blind writers of x = 1 in two
// sessions, C writes x = 1 too (and y, and reads z = null, which A
// writes). Both A and C's commit are joined in the known edges only
// through rw edges into C_C that V1b draws (Rp and Rp2 read P's y, which
// C overwrites), so V1a decides "A before C" and "B before C". A's ww
// edge C_A -> B_C is then the only edge against C's snapshot missing A's
// z: invalid. A cover taken through B would leave it out.
func TestSIDupBlindPairCoversNothing(t *testing.T) {
	text := "A w x 1, w z 7 (session s1)\nRp r y 5 (session s1)\n" +
		"B w x 1 (session s2)\nRp2 r y 5 (session s2)\n" +
		"P w y 5 (session s3)\nRc r y 6 (session s3)\n" +
		"C r z null, w x 1, w y 6 (session s4)"
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrongSessionSnapshotIsolation
	want, _, err := oracle.Check(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want {
		t.Fatalf("the oracle says valid; the test expects invalid\n%s", text)
	}
	var c siDupCounts
	c.add(h, opts)
	if c.sb == 0 {
		t.Fatalf("SB did not fire: %+v", c)
	}
	prunedAndPlainAgree(t, h, opts, want, 0, text, true)
}

package online

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/state"
)

// closeGoneHistory is §5 "Close reaches a transaction that left open":
// T2, unknown, reads x as [1] after appending 1, which no completion in
// which it commits allows (its session predecessor T1 appended 1 and 2
// before it), so it is decided not to commit and leaves at once, open.
// T4 reads T2's appends, so T2 must commit: a violation, alerted once T2
// time-closes (e + D = 99) and T4 closes (119). Twenty later writes keep
// the stream going (heldDecidedHistory), so the alert must not wait for
// the end of input.
func closeGoneHistory(t *testing.T) (*history.History, history.Options) {
	t.Helper()
	return heldDecidedHistory(t, `T1[27,43] append x 1, append x 2 (session c1)
T2[46,59] append x 1, r x [1], append x 3 (unknown, session c1)
T3[60,89] append x 3 (session c1)
T4[91,119] r x [1 2 1 3 3] (session c1)`, 0, 40, history.InitialEmpty)
}

// TestCloseReachesGone: the alert fires when T4 closes (w = 120), not at
// the end of input, and the reduced instance never disagrees with the
// bodies (the self-checks fail the step if it does).
func TestCloseReachesGone(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	h, opts := closeGoneHistory(t)
	fired, o := sweep(t, h, opts)
	if len(fired) == 0 || fired[0].w != 120 {
		t.Fatalf("alerts %v, want the first at w = 120 (T2 time-closed, T4 closed)", fired)
	}
	if want := []string{"T1", "T2", "T3", "T4"}; !slices.Equal(fired[len(fired)-1].core, want) {
		t.Fatalf("last core %v, want %v", fired[len(fired)-1].core, want)
	}
	if len(o.openGone) != 0 {
		t.Fatalf("openGone holds %v after every transaction closed", o.openGone)
	}
}

// TestCloseReachesGoneRestored: the same from a body file, the engine
// restored from its durable snapshot before every step (whose index holds
// no spilled transaction: restoreGone must find T2 again).
func TestCloseReachesGoneRestored(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	h, opts := closeGoneHistory(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bodies")
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(path)})
	txns := append([]history.Txn(nil), h.Txns...)
	sort.SliceStable(txns, func(i, j int) bool { return txns[i].Start < txns[j].Start })
	var instants []int64
	for _, tx := range txns {
		instants = append(instants, tx.Start+1, opts.EffectiveEnd(&tx)+1)
	}
	slices.Sort(instants)
	var firstAt int64 = -1
	next, closed, k := 0, map[string]bool{}, 0
	step := func(w int64) {
		as, err := o.Step(context.Background())
		if err != nil {
			t.Fatalf("step at %d: %v", w, err)
		}
		if len(as) > 0 && firstAt < 0 {
			firstAt = w
		}
		k++
		next := filepath.Join(dir, fmt.Sprintf("bodies-%d", k))
		o, _, _ = durableCheckpoint(t, o, opts, path, next, nil)
		path = next
	}
	for _, w := range instants {
		for next < len(txns) && txns[next].Start < w {
			o.Release(txns[next])
			next++
		}
		for i := range next {
			if e := opts.EffectiveEnd(&txns[i]); !closed[txns[i].ID] && e < w {
				closed[txns[i].ID] = true
				o.Close(txns[i].ID)
			}
		}
		step(w)
	}
	o.CloseAll()
	step(math.MaxInt64)
	if firstAt != 120 {
		t.Fatalf("first alert at w = %d, want 120", firstAt)
	}
}

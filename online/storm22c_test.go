package online

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// runParkStorm releases parkStorm(t, i) to a fresh evicting engine in
// start order, closing what is time-closed, and calls each after every
// step (one every 50 releases, and the last after CloseAll) with the
// transactions released since the step before.
func runParkStorm(t *testing.T, i int, each func(o *Online, released []history.Txn)) *Online {
	t.Helper()
	h, opts := parkStorm(t, i)
	ctx := context.Background()
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	txns := byStart(h)
	from := 0
	step := func(to int) {
		t.Helper()
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		each(o, txns[from:to])
		from = to
	}
	var open []int
	for k := range txns {
		o.Release(txns[k])
		open = append(open, k)
		w := txns[k].Start
		keep := open[:0]
		for _, j := range open {
			if e := opts.EffectiveEnd(&txns[j]); e != math.MaxInt64 && e+opts.Skew < w-opts.Skew {
				o.Close(txns[j].ID)
			} else {
				keep = append(keep, j)
			}
		}
		open = keep
		if (k+1)%50 == 0 {
			step(k + 1)
		}
	}
	o.CloseAll()
	step(len(txns))
	return o
}

// TestStorm22cRewindPointsKeepParked: a rewind point shares the parked
// groups' arrays with the live state (cloneParked), so nothing may write
// them once parked. With the self-checks on, each point keeps the JSON of
// the state it copied; after every step of a storm that parks and
// re-admits groups, every point must still encode to exactly that, not
// only the point a replay happens to start from.
func TestStorm22cRewindPointsKeepParked(t *testing.T) {
	defer func(e int) { rewindEvery = e }(rewindEvery)
	defer SetSelfCheck(SetSelfCheck(true))
	rewindEvery = 512
	withParked, checked := 0, 0
	beforeR := readmitTrace.Load()
	runParkStorm(t, 1, func(o *Online, _ []history.Txn) {
		for k := range o.rewinds {
			p := &o.rewinds[k]
			if p.st == nil || p.check == nil {
				continue
			}
			if err := p.checkUnchanged(); err != nil {
				t.Fatal(err)
			}
			checked++
			if len(p.st.parked) > 0 {
				withParked++
			}
		}
	})
	if withParked == 0 || readmitTrace.Load() == beforeR {
		t.Fatalf("points with parked groups checked %d (of %d), groups re-admitted %d: the test compares nothing", withParked, checked, readmitTrace.Load()-beforeR)
	}
}

// TestStorm22cBypassSessionsBounded: bypassGhosts' per-session scratch
// holds only sessions of the last two instances it was given. The storm
// makes fresh sessions for every injected anomaly; kept, every session
// ever in an instance was visited at every step (a fifth of the CPU of
// the 2M storm at 550K). Three instances on sessions of their own are
// given in turn; after the third the scratch may hold the sessions of
// the second and the third only, and the second's must be empty (a
// session left over from a build must not carry its entries into the
// next: B4 would read them).
func TestStorm22cBypassSessionsBounded(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	o.bypass, o.bypassSess = map[history.Key]bypassKey{}, map[string][]sessEntry{}
	var pos [][]int
	for b := range 3 {
		var at []int
		for j := range 4 {
			start := int64(1000*b + 10*j)
			o.Release(stormTxn(fmt.Sprintf("t%d.%d", b, j), fmt.Sprintf("s%d.%d", b, j%2), start, start+5, wOp(fmt.Sprintf("k%d.%d", b, j), "1")))
			at = append(at, o.log.len()-1)
		}
		pos = append(pos, at)
	}
	cover := keptCoverSet{covered: func(int) bool { return false }}
	for _, at := range pos {
		o.bypassGhosts(at[:2], slices.Clone(at[2:]), map[int]bool{}, cover)
	}
	got := slices.Sorted(maps.Keys(o.bypassSess))
	if want := []string{"s1.0", "s1.1", "s2.0", "s2.1"}; !slices.Equal(got, want) {
		t.Fatalf("bypassGhosts' scratch holds sessions %v after three instances, want %v (the last two)", got, want)
	}
	for _, s := range []string{"s1.0", "s1.1"} {
		if l := o.bypassSess[s]; len(l) != 0 {
			t.Fatalf("session %s of the instance before holds %d entries", s, len(l))
		}
	}
	if l := o.bypassSess["s2.0"]; len(l) != 2 {
		t.Fatalf("session s2.0 holds %d entries, want 2", len(l))
	}
}

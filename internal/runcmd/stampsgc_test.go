package runcmd

import "testing"

// TestStampsGCPercent: the heap's goal, live*(1+GOGC/100), is at least
// the floor while the live heap is below half of it, and GOGC is the
// default's 100 from there on (never below: the pacing only ever makes
// the collector lazier than the default, up to the bound).
func TestStampsGCPercent(t *testing.T) {
	for _, live := range []int64{1, 1 << 10, 1 << 20, 7 << 20, 17 << 20, 31 << 20, 32 << 20, 33 << 20, 1 << 30} {
		p := stampsGCPercent(live)
		goal := live + live*int64(p)/100
		switch {
		case p < 100 || p > 1000:
			t.Errorf("live %d: GOGC %d outside [100, 1000]", live, p)
		case 2*live >= stampsHeapFloor && p != 100:
			t.Errorf("live %d (half the floor or more): GOGC %d, want 100", live, p)
		case 2*live < stampsHeapFloor && p < 1000 && goal < stampsHeapFloor-live/100:
			t.Errorf("live %d: goal %d below the floor %d", live, goal, stampsHeapFloor)
		}
	}
	if stampsGCPercent(0) != 100 {
		t.Error("an unknown live heap must leave the default")
	}
}

// TestStampsGCRetune: GOGC is set at the first step while the stamps
// vouch, looked at again every stampsGCEvery steps, put back as it was
// when they stop vouching and never raised again afterwards, and left
// alone when the user set GOGC. Mutations seen to fail it: the restore on
// a fallback left out; the "never again" left out (the pacing resumed
// for the black-box engine); the user's GOGC overridden.
func TestStampsGCRetune(t *testing.T) {
	cur, sets := 100, 0
	live := int64(8 << 20)
	g := &stampsGC{set: func(p int) int { old := cur; cur = p; sets++; return old }, live: func() int64 { return live }}
	g.retune(true, false)
	if cur != stampsGCPercent(8<<20) || sets != 1 {
		t.Fatalf("first step: GOGC %d after %d sets, want %d after 1", cur, sets, stampsGCPercent(8<<20))
	}
	live = 16 << 20
	for range stampsGCEvery - 1 {
		g.retune(true, false)
	}
	if sets != 1 {
		t.Fatalf("GOGC set %d times within %d steps, want once", sets, stampsGCEvery)
	}
	g.retune(true, false)
	if cur != stampsGCPercent(16<<20) {
		t.Fatalf("after %d steps GOGC %d, want %d", stampsGCEvery, cur, stampsGCPercent(16<<20))
	}
	g.retune(false, false)
	if cur != 100 {
		t.Fatalf("after the fallback GOGC %d, want the 100 it was", cur)
	}
	n := sets
	for range 3 * stampsGCEvery {
		g.retune(true, false)
	}
	if sets != n || cur != 100 {
		t.Fatalf("after the fallback GOGC was set again (%d, %d sets)", cur, sets-n)
	}
	u := &stampsGC{set: func(p int) int { t.Fatalf("GOGC set to %d though the user set it", p); return 0 }, live: func() int64 { return 1 << 20 }}
	for range 2 * stampsGCEvery {
		u.retune(true, true)
	}
	u.retune(false, true)
	u.restore()
}

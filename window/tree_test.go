package window

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMinTree compares the tournament tree with a scan, over sizes that are
// and are not powers of two, with independent keys and refs (the window's
// are nearly ordered alike, which would hide a mix-up) and idle leaves.
func TestMinTree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range []int{1, 2, 3, 5, 8, 13, 32, 33} {
		tr := newMinTree(p)
		leaves := make([]treeNode, p)
		for i := range leaves {
			leaves[i] = idleLeaf
		}
		for range 500 {
			i := r.IntN(p)
			v := treeNode{r.Int64N(100) - 50, r.Int64N(100) - 50}
			if r.IntN(5) == 0 {
				v = idleLeaf
			}
			tr.set(i, v)
			leaves[i] = v
			want := idleLeaf
			for _, l := range leaves {
				want = treeNode{min(want.key, l.key), min(want.ref, l.ref)}
			}
			if got := tr.root(); got != want {
				t.Fatalf("P=%d: root %v, want %v", p, got, want)
			}
			if want.ref != math.MaxInt64 {
				if j := tr.minRefLeaf(); j >= p || leaves[j].ref != want.ref {
					t.Fatalf("P=%d: minRefLeaf %d (ref %v), want ref %d", p, j, leaves, want.ref)
				}
			}
		}
	}
}

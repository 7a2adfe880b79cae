package closure

import (
	"math/rand/v2"
	"testing"
)

// TestRowAgainstMap checks the offset bitset (growth to both sides, masked
// word OR with fresh-bit reporting) against a map.
func TestRowAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		var a, b row
		ma, mb := map[ID]bool{}, map[ID]bool{}
		base := ID(r.IntN(1000))
		for range r.IntN(40) {
			id := base + ID(r.IntN(400))
			a.set(id)
			ma[id] = true
		}
		for range r.IntN(40) {
			id := base + ID(r.IntN(400))
			b.set(id)
			mb[id] = true
		}
		hi := base + ID(r.IntN(450)) - 20
		fresh := map[ID]bool{}
		a.orFrom(&b, hi, func(id ID) {
			if fresh[id] {
				t.Fatalf("iter %d: t%d reported twice", iter, id)
			}
			fresh[id] = true
		})
		for id := range mb {
			if id <= hi && !ma[id] {
				if !fresh[id] {
					t.Fatalf("iter %d: t%d not reported", iter, id)
				}
				ma[id] = true
			}
		}
		if len(fresh) != func() int {
			n := 0
			for id := range mb {
				if id <= hi && fresh[id] {
					n++
				}
			}
			return n
		}() {
			t.Fatalf("iter %d: reported bits not in the source: %v", iter, fresh)
		}
		for id := base - 70; id < base+470; id++ {
			if a.test(id) != ma[id] {
				t.Fatalf("iter %d: test(t%d) = %v, want %v", iter, id, a.test(id), ma[id])
			}
		}
	}
}

package window

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIDSet compares the set with a model (a list of every record), under
// the real hash and under weak hashes that make most IDs collide (so the
// byte comparison and the probing past equal hashes are what decide), with
// IDs of many lengths, empty and long (multi-byte uvarint lengths)
// included, starts near and far apart (reuse beyond the horizon), W
// advancing (forgetting, and rebuilds that drop the forgotten) and
// extreme starts (no overflow in the horizon test).
func TestIDSet(t *testing.T) {
	hashes := map[string]func(maphash.Seed, string) uint64{
		"maphash":  nil,
		"constant": func(maphash.Seed, string) uint64 { return 7 },
		"length":   func(_ maphash.Seed, s string) uint64 { return uint64(len(s)) },
	}
	type record struct {
		id    string
		start int64
	}
	for name, h := range hashes {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			const horizon = 50
			s := newIDSet(horizon)
			s.hash = h
			var model []record
			floor := int64(math.MinInt64)
			w := int64(math.MinInt64)
			n := 6000
			if name == "constant" {
				n = 800 // quadratic probing chains
			}
			for i := range n {
				var id string
				switch r.IntN(5) {
				case 0:
					id = ""
				case 1:
					id = strings.Repeat("x", r.IntN(300))
				default:
					id = fmt.Sprint(r.IntN(n / 4))
				}
				if i%7 == 0 {
					id += "\x00"
				}
				start := int64(i) + r.Int64N(200) - 100
				switch r.IntN(50) {
				case 0:
					start = math.MaxInt64 - r.Int64N(3)
				case 1:
					start = math.MinInt64 + r.Int64N(3)
				}
				repeat := false
				for _, rec := range model {
					if rec.id == id && rec.start >= floor && new(big.Int).Abs(new(big.Int).Sub(big.NewInt(rec.start), big.NewInt(start))).Cmp(big.NewInt(horizon)) <= 0 {
						repeat = true
					}
				}
				if !repeat && start >= floor {
					model = append(model, record{id, start})
				}
				if got := s.add(id, start); got != !repeat {
					t.Fatalf("step %d: add(%q, %d) = %v, want %v", i, id, start, got, !repeat)
				}
				if r.IntN(10) == 0 && int64(i)-120 > w {
					w = int64(i) - 120
					floor = w - horizon
					s.advance(w)
				}
				if i%97 == 0 {
					live := 0
					for _, rec := range model {
						if rec.start >= floor {
							live++
						}
					}
					if s.len() != live {
						t.Fatalf("step %d: len %d, want %d", i, s.len(), live)
					}
				}
			}
			// Memory follows what is remembered, not what was seen.
			if name == "maphash" && len(s.slots) > 4*minIDSlots*(1+s.len()/minIDSlots) {
				t.Errorf("%d slots for %d remembered ids", len(s.slots), s.len())
			}
		})
	}
}

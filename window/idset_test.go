package window

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIDSet compares the set with a map, under the real hash and under weak
// hashes that make most IDs collide (so the byte comparison and the probing
// past equal hashes are what decide), with IDs of many lengths, empty and
// long (multi-byte uvarint lengths) included.
func TestIDSet(t *testing.T) {
	hashes := map[string]func(maphash.Seed, string) uint64{
		"maphash":  nil,
		"constant": func(maphash.Seed, string) uint64 { return 7 },
		"length":   func(_ maphash.Seed, s string) uint64 { return uint64(len(s)) },
	}
	for name, h := range hashes {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			s := newIDSet()
			s.hash = h
			want := map[string]bool{}
			n := 3000
			if name == "constant" {
				n = 400 // quadratic probing chains
			}
			for i := range n {
				var id string
				switch r.IntN(5) {
				case 0:
					id = ""
				case 1:
					id = strings.Repeat("x", r.IntN(300))
				default:
					id = fmt.Sprint(r.IntN(n))
				}
				if i%7 == 0 {
					id += "\x00"
				}
				isNew := !want[id]
				want[id] = true
				if got := s.add(id); got != isNew {
					t.Fatalf("add(%q) = %v, want %v", id, got, isNew)
				}
				if s.len() != len(want) {
					t.Fatalf("len %d, want %d", s.len(), len(want))
				}
			}
			for id := range want {
				if s.add(id) {
					t.Fatalf("%q lost", id)
				}
			}
		})
	}
}

package sionline

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestGhostCodecRoundTrips: a ghost written to the archive (encodeGhost,
// the spill codec) decodes to the same ghost, register versions, list
// appends in order, register and list pins and time alike; and a ghost
// an earlier build wrote as JSON still decodes.
func TestGhostCodecRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 17))
	for n := range 200 {
		g := newGhost()
		g.Time = rng.Int64N(1 << 40)
		for k := range rng.IntN(30) {
			key := history.Key(fmt.Sprintf("k%d", k))
			switch rng.IntN(5) {
			case 0:
				g.Reg[key] = history.Value(fmt.Sprint(rng.IntN(9)))
			case 1:
				for range 1 + rng.IntN(4) {
					g.List[key] = append(g.List[key], history.Value(fmt.Sprint(rng.IntN(9))))
				}
			case 2:
				g.Pin[key] = history.Op{Kind: history.Read, Key: key, Value: history.Value(fmt.Sprint(rng.IntN(9)))}
				if rng.IntN(2) == 0 {
					g.Reg[key] = "w"
				}
			case 3:
				op := history.Op{Kind: history.Read, Key: key, IsList: true}
				for range rng.IntN(3) {
					op.List = append(op.List, history.Value(fmt.Sprint(rng.IntN(9))))
				}
				g.Pin[key] = op
				g.List[key] = []history.Value{"a", "b"}
			}
		}
		got, err := decodeGhost(encodeGhost(g))
		if err != nil {
			t.Fatalf("ghost %d: %v", n, err)
		}
		if !sameGhost(got, g) {
			t.Fatalf("ghost %d: wrote %+v, read back %+v", n, g, got)
		}
		js, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		old, err := decodeGhost(js)
		if err != nil {
			t.Fatalf("ghost %d as JSON: %v", n, err)
		}
		if !sameGhost(old, g) {
			t.Fatalf("ghost %d as JSON: wrote %+v, read back %+v", n, g, old)
		}
	}
}

// sameGhost compares ghosts as the engine reads them: an empty list read
// is the empty list however it is held.
func sameGhost(a, b *ghost) bool {
	norm := func(g *ghost) *ghost {
		c := g.clone()
		for k, op := range c.Pin {
			if op.IsList && len(op.List) == 0 {
				op.List = nil
				c.Pin[k] = op
			}
		}
		return c
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

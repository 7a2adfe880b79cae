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
		if n%2 == 1 {
			// Companions (codec 2): writes and appends, and keys only read.
			for c := range 1 + rng.IntN(3) {
				cp := companion{Name: fmt.Sprintf("%s%d", compPrefix, c)}
				for k := range 1 + rng.IntN(3) {
					key := history.Key(fmt.Sprintf("c%d-%d", c, k))
					cp.Keys = append(cp.Keys, key)
					switch rng.IntN(3) {
					case 0:
						cp.Writes = append(cp.Writes, history.Op{Kind: history.Write, Key: key, Value: history.Value(fmt.Sprint(rng.IntN(9)))})
					case 1:
						for range 1 + rng.IntN(3) {
							cp.Writes = append(cp.Writes, history.Op{Kind: history.Append, Key: key, Value: history.Value(fmt.Sprint(rng.IntN(9)))})
						}
					}
				}
				g.Comp = append(g.Comp, cp)
			}
		}
		got, err := decodeGhost(encodeGhost(g))
		if err != nil {
			t.Fatalf("ghost %d: %v", n, err)
		}
		if !sameGhost(got, g) {
			t.Fatalf("ghost %d: wrote %+v, read back %+v", n, g, got)
		}
		if len(g.Comp) > 0 {
			continue // no JSON ghost (an earlier build's) had companions
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

// TestSnapshotVersions: a snapshot says version 6 (its archive's
// segments may be Delta ones, with undo records, undo.go, which a build
// before it cannot read); version 5 (ghosts with companions, codec 2), 4
// (the spill codec) and 3 (JSON ghosts), which decodeGhost reads, still
// restore, and any other is refused.
func TestSnapshotVersions(t *testing.T) {
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty}
	e, err := New(opts, Config{Stream: "s"})
	if err != nil {
		t.Fatal(err)
	}
	e.Release(txn("a", "s", 0, 1, w("x", "1")))
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(snap, &m); err != nil {
		t.Fatal(err)
	}
	if v := m["Version"]; v != float64(6) {
		t.Fatalf("snapshot version %v, want 6", v)
	}
	for v, ok := range map[int]bool{2: false, 3: true, 4: true, 5: true, 6: true, 7: false} {
		m["Version"] = v
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Restore(opts, Config{Stream: "s"}, b); (err == nil) != ok {
			t.Fatalf("version %d: restore error %v, want it to restore: %t", v, err, ok)
		}
	}
}

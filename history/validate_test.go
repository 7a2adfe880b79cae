package history

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// naiveValidate is Validate as first written (a map of kinds and a map
// of positions per key): the model the one-lookup version is held to.
func naiveValidate(h *History) error {
	seen := map[string]int{}
	kind := map[Key]bool{}
	kindAt := map[Key]int{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if j, dup := seen[t.ID]; dup {
			return &Error{Pos: t.Pos, ID: t.ID, Field: "id", Err: fmt.Errorf("duplicate id (first at %s)", h.Txns[j].Pos)}
		}
		seen[t.ID] = i
		if t.HasTime && t.End < t.Start {
			return &Error{Pos: t.Pos, ID: t.ID, Field: "end", Err: fmt.Errorf("end %d is before start %d", t.End, t.Start)}
		}
		for _, op := range t.Ops {
			list, decided := op.KeyKind()
			if !decided {
				continue
			}
			if prev, ok := kind[op.Key]; ok && prev != list {
				return KindClash(t, op.Key, h.Txns[kindAt[op.Key]].ID)
			}
			kind[op.Key] = list
			kindAt[op.Key] = i
		}
	}
	return h.ValidateFacts()
}

// TestValidateAgainstNaive: on random small histories (few keys used as
// lists and registers, reused ids, inverted times), Validate returns the
// naive model's error, text and all (the transaction it names included),
// or none when the model has none.
func TestValidateAgainstNaive(t *testing.T) {
	clashes := 0
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 17))
		h := &History{}
		for i := range 1 + rng.IntN(12) {
			tx := Txn{ID: fmt.Sprintf("t%d", rng.IntN(40)), Start: int64(i), End: int64(i + 1), HasTime: true, Pos: Pos{Source: "s", Line: i + 1}}
			if rng.IntN(50) == 0 {
				tx.End = tx.Start - 1
			}
			for range rng.IntN(4) {
				op := Op{Key: Key(fmt.Sprintf("k%d", rng.IntN(5))), Value: "1"}
				switch rng.IntN(4) {
				case 0:
					op.Kind = Write
				case 1:
					op.Kind = Append
				case 2:
					op.Kind, op.IsList, op.List = Read, true, []Value{"1"}
				default:
					op.Kind, op.Value = Read, Null
				}
				tx.Ops = append(tx.Ops, op)
			}
			h.Txns = append(h.Txns, tx)
		}
		got, want := h.Validate(), naiveValidate(h)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: Validate %v, model %v", seed, got, want)
		}
		if want != nil && h.Txns[0].ID != "" {
			clashes++
		}
	}
	if clashes == 0 {
		t.Fatal("no history the model rejects: the sweep proves nothing")
	}
}

package incremental

import (
	"maps"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestAppendersOfEveryReadKey: prepare builds appendersOf only for the
// keys some kept transaction reads (prep.go); for each of those it must
// hold exactly what the table over every append holds (every appender of
// each element, in transaction order, once per element), whether the
// prepared is new or takes over an earlier one's buffers. Generated list
// histories with unknown outcomes (dropped write-free unknowns), aborts
// and duplicate values; each history is also prepared again from its
// second half, so that a reused buffer meets keys numbered differently.
func TestAppendersOfEveryReadKey(t *testing.T) {
	var old *prepared
	asked := 0
	for seed := uint64(1); seed <= 40; seed++ {
		cfg := gen.Config{
			Txns: 60 + int(seed)*7, Sessions: 6, Keys: 12, OpsPerTxn: 5, Concurrency: 4,
			ReadRatio: 0.5, BlindWriteRatio: 0.3, DupValueRatio: 0.3,
			UnknownRatio: 0.15, AbortRatio: 0.1, ListRatio: 0.6, Seed: seed,
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, sub := range []*history.History{h, {Txns: h.Txns[len(h.Txns)/2:]}} {
			p := prepareReusing(old, sub, history.DefaultOptions())
			old = p
			want := naiveAppenders(p)
			for ti := range p.txns {
				for ri := range p.txns[ti].reads {
					k := p.txns[ti].reads[ri].key
					asked++
					if !maps.EqualFunc(p.appendersOf[k], want[k], slices.Equal[[]int32]) {
						t.Fatalf("seed %d, key %s: appendersOf %v, every append gives %v", seed, p.keys[k], p.appendersOf[k], want[k])
					}
				}
			}
		}
	}
	if asked < 100 {
		t.Fatalf("only %d reads compared", asked)
	}
}

// naiveAppenders is appendersOf over every append of every kept
// transaction.
func naiveAppenders(p *prepared) []map[history.Value][]int32 {
	out := make([]map[history.Value][]int32, len(p.keys))
	for ti := range p.h.Txns {
		if p.txns[ti].dropped {
			continue
		}
		for _, op := range p.h.Txns[ti].Ops {
			if op.Kind != history.Append {
				continue
			}
			k := p.keyIndex[op.Key]
			if out[k] == nil {
				out[k] = map[history.Value][]int32{}
			}
			if as := out[k][op.Value]; len(as) == 0 || as[len(as)-1] != int32(ti) {
				out[k][op.Value] = append(as, int32(ti))
			}
		}
	}
	return out
}

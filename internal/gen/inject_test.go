package gen

import (
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// checkInjection verifies one injection record against the history it came
// from: its transactions exist and are exactly the injection's, touch keys
// no other transaction touches, violate the level as a core (projection of
// docs/SEMANTICS.md §3, brute force) and every core less one transaction is
// valid. Stale reads violate strict serializability only.
func checkInjection(t *testing.T, recs []record, in Injected, k int) {
	t.Helper()
	var all []history.Txn
	byID := map[string]history.Txn{}
	for _, r := range recs {
		all = append(all, r.t)
		byID[r.t.ID] = r.t
	}
	var core []history.Txn
	listed := map[string]bool{}
	for _, id := range in.Txns {
		tx, ok := byID[id]
		if !ok {
			t.Fatalf("%s: listed txn %s missing", in.Type, id)
		}
		core = append(core, tx)
		listed[id] = true
	}
	keys := map[history.Key]bool{}
	for _, r := range recs {
		if (r.m.inj == k) != listed[r.t.ID] {
			t.Fatalf("%s: txn %s: injection %d, listed %v", in.Type, r.t.ID, r.m.inj, listed[r.t.ID])
		}
		if r.m.inj == k {
			for _, op := range r.t.Ops {
				keys[op.Key] = true
			}
		}
	}
	for _, r := range recs {
		if r.m.inj == k {
			continue
		}
		for _, op := range r.t.Ops {
			if keys[op.Key] {
				t.Fatalf("%s: key %s shared with %s", in.Type, op.Key, r.t.ID)
			}
		}
	}
	strict := in.Type == StaleRead
	if bruteValid(project(core, all, strict), strict) {
		t.Errorf("%s: core %v is valid", in.Type, in.Txns)
	}
	if strict && !bruteValid(project(core, all, false), false) {
		t.Errorf("%s: core %v violates serializability too", in.Type, in.Txns)
	}
	for drop := range core {
		sub := append(append([]history.Txn(nil), core[:drop]...), core[drop+1:]...)
		if !bruteValid(project(sub, all, strict), strict) {
			t.Errorf("%s: core less %s still violates: not minimal", in.Type, core[drop].ID)
		}
	}
}

func allTypes() []string { return append(InjectTypes(), "stale-read", "LOST-UPDATE") }

func TestInjectedCores(t *testing.T) {
	for _, typ := range allTypes() {
		t.Run(typ, func(t *testing.T) {
			cfg := preset(t, "mixed")
			cfg.Txns = 2000
			cfg.Inject = []string{typ}
			recs, inj := collect(t, cfg)
			want, _ := canonicalType(typ)
			if len(inj) != 1 || inj[0].Type != want || len(inj[0].Txns) == 0 {
				t.Fatalf("injected %+v, want one %s", inj, want)
			}
			checkInjection(t, recs, inj[0], 0)
			if err := replayExecOrder(recs); err != nil {
				t.Fatalf("base history without the injection: %v", err)
			}
		})
	}
}

// On tiny histories the brute force can take the whole history: with the
// injection it violates, without it (base only) it is valid.
func TestInjectedTinyWholeHistory(t *testing.T) {
	for _, typ := range InjectTypes() {
		for seed := uint64(0); seed < 4; seed++ {
			cfg := Config{
				Txns: 4, Sessions: 2, Keys: 3, OpsPerTxn: 3, Concurrency: 1,
				ReadRatio: 0.5, BlindWriteRatio: 0.5, ListRatio: 0.34,
				UnknownRatio: 0.2, AbortRatio: 0.1, Seed: seed, Inject: []string{typ},
			}
			recs, inj := collect(t, cfg)
			var all, base []history.Txn
			for _, r := range recs {
				all = append(all, r.t)
				if r.m.inj < 0 {
					base = append(base, r.t)
				}
			}
			strict := typ == StaleRead
			if bruteValid(project(all, all, strict), strict) {
				t.Errorf("%s seed %d: whole history valid", typ, seed)
			}
			if !bruteValid(project(base, base, true), true) {
				t.Errorf("%s seed %d: base not strict serializable", typ, seed)
			}
			checkInjection(t, recs, inj[0], 0)
		}
	}
}

func TestInjectionLeavesBaseUnchanged(t *testing.T) {
	cfg := preset(t, "mixed")
	cfg.Txns = 3000
	plain, _, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Inject = allTypes()
	recs, inj := collect(t, cfg)
	if len(inj) != len(cfg.Inject) {
		t.Fatalf("%d injections, want %d", len(inj), len(cfg.Inject))
	}
	var base []history.Txn
	for _, r := range recs {
		if r.m.inj < 0 {
			base = append(base, r.t)
		}
	}
	if !reflect.DeepEqual(base, plain.Txns) {
		t.Fatal("injecting changed the base history")
	}
	for k, in := range inj {
		checkInjection(t, recs, in, k)
	}
}

func TestInjectRate(t *testing.T) {
	cfg := preset(t, "blindw-rw")
	cfg.Txns, cfg.InjectRate = 20000, 0.002
	recs, inj := collect(t, cfg)
	if len(inj) < 20 || len(inj) > 65 {
		t.Fatalf("%d injections at rate 0.002 over 20000 txns", len(inj))
	}
	types := InjectTypes()
	for k, in := range inj {
		if in.Type != types[k%len(types)] {
			t.Fatalf("injection %d is %s, want %s", k, in.Type, types[k%len(types)])
		}
		checkInjection(t, recs, in, k)
	}
	cfg.Inject = []string{history.WriteSkew}
	_, inj = collect(t, cfg)
	for _, in := range inj {
		if in.Type != history.WriteSkew || in.Class != history.G2Item {
			t.Fatalf("got %+v", in)
		}
	}
}

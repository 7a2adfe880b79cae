package oracle

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

// tinyCount is the number of generated histories per randomized test:
// ORACLE_TINY=N overrides it (e.g. ORACLE_TINY=200000 for a long run).
func tinyCount(t *testing.T, def int) int {
	if s := os.Getenv("ORACLE_TINY"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ORACLE_TINY=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() || raceEnabled {
		return def / 10
	}
	return def
}

// tinyOptions are the option sets every randomized test runs: each level,
// Δ = 0 and Δ > 0.
func tinyOptions() []history.Options {
	var out []history.Options
	for _, l := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
		for _, skew := range []int64{0, 3} {
			o := history.DefaultOptions()
			o.Level, o.Skew = l, skew
			out = append(out, o)
		}
	}
	return out
}

// TestTinyMix reports the generator's mix per level and Δ and holds it to
// docs/SEMANTICS.md §4: at least 30% valid and 30% invalid needing search.
func TestTinyMix(t *testing.T) {
	n := tinyCount(t, 10000)
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := DefaultTinyConfig()
	hs := make([]*history.History, n)
	for i := range hs {
		hs[i] = RandomTiny(rng, cfg)
	}
	began := time.Now()
	for _, o := range tinyOptions() {
		var valid, search int
		for _, h := range hs {
			v, s := Classify(h, o)
			if v {
				valid++
			}
			if s {
				search++
			}
		}
		pv, ps := 100*valid/n, 100*search/n
		t.Logf("%-28s Δ=%d: %5d histories, valid %2d%%, invalid needing search %2d%%, invalid on its face %2d%%",
			o.Level, o.Skew, n, pv, ps, 100-pv-ps)
		if pv < 30 || ps < 30 {
			t.Errorf("%s Δ=%d: mix valid %d%%, needs search %d%%; want both >= 30%%", o.Level, o.Skew, pv, ps)
		}
	}
	t.Logf("%d checks in %v", n*len(tinyOptions()), time.Since(began))
}

// TestTinyValidInput: the generator's histories are input every checker
// accepts.
func TestTinyValidInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range tinyCount(t, 5000) {
		h := RandomTiny(rng, DefaultTinyConfig())
		if err := h.Validate(); err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
		if _, _, err := Check(h, history.Options{Level: history.StrictSerializable, InDoubt: history.NoInDoubt}); err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
	}
}

// TestTinyConfigs: every feature can be switched off, and what is off does
// not appear.
func TestTinyConfigs(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range tinyCount(t, 2000) {
		cfg := DefaultTinyConfig()
		cfg.Timestamps = rng.IntN(2) == 0
		cfg.Sessions = rng.IntN(2) == 0
		cfg.Lists = rng.IntN(2) == 0
		cfg.Unknowns = rng.IntN(2) == 0
		cfg.Aborts = rng.IntN(2) == 0
		cfg.InitialValues = rng.IntN(2) == 0
		cfg.Keys = 2 + rng.IntN(2)
		h := RandomTiny(rng, cfg)
		if err := h.Validate(); err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
		if n := len(h.Txns); n < 2 || n > 6 {
			t.Fatalf("%d transactions", n)
		}
		keys := map[history.Key]bool{}
		for i := range h.Txns {
			tx := &h.Txns[i]
			switch {
			case tx.HasTime != cfg.Timestamps:
				t.Fatalf("HasTime %v with Timestamps %v", tx.HasTime, cfg.Timestamps)
			case tx.HasSession && !cfg.Sessions:
				t.Fatal("a session with Sessions off")
			case tx.Status == history.Unknown && !cfg.Unknowns, tx.Status == history.Aborted && !cfg.Aborts:
				t.Fatalf("status %s with it off", tx.Status)
			}
			for _, op := range tx.Ops {
				keys[op.Key] = true
			}
		}
		if len(h.ListKeys()) > 0 && !cfg.Lists {
			t.Fatal("a list with Lists off")
		}
		if len(keys) > cfg.Keys {
			t.Fatalf("%d keys, want at most %d", len(keys), cfg.Keys)
		}
		o := history.DefaultOptions()
		if cfg.Timestamps {
			o.Level = history.StrictSerializable
		}
		if _, _, err := Check(h, o); err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
	}
}

// TestTinyDeterministic: one seed, one history, so a failure found by a
// long run can be replayed from its seed.
func TestTinyDeterministic(t *testing.T) {
	for seed := range uint64(200) {
		a := RandomTiny(rand.New(rand.NewPCG(seed, 0)), DefaultTinyConfig())
		b := RandomTiny(rand.New(rand.NewPCG(seed, 0)), DefaultTinyConfig())
		if compactOf(a) != compactOf(b) {
			t.Fatalf("seed %d:\n%s\n%s", seed, compactOf(a), compactOf(b))
		}
	}
	var zero TinyConfig
	zero.MinTxns, zero.MaxTxns = 2, 2
	if h := RandomTiny(rand.New(rand.NewPCG(1, 1)), zero); len(h.Txns) != 2 || h.Validate() != nil {
		t.Fatalf("zero config: %s", compactOf(h))
	}
}

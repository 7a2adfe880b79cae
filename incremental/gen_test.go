package incremental

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestGeneratedValidHistories: histories of the simulated store are strict
// serializable by construction, so no level may report an anomaly (issue
// #4 acceptance 2; STREAMCHECK_VALID_COUNT=1000 STREAMCHECK_VALID_TXNS=2000
// is the acceptance run).
func TestGeneratedValidHistories(t *testing.T) {
	count := envInt("STREAMCHECK_VALID_COUNT", 12)
	maxTxns := envInt("STREAMCHECK_VALID_TXNS", 400)
	presets := gen.PresetNames()
	// STREAMCHECK_VALID_FROM lets a long run be split between processes.
	from := envInt("STREAMCHECK_VALID_FROM", 0)
	for i := from; i < from+count; i++ {
		cfg, err := gen.Preset(presets[i%len(presets)])
		if err != nil {
			t.Fatal(err)
		}
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 50 + (i*7919)%maxTxns
		// Hot keys, but not so hot that serializable (every pair of a
		// key's writers a variable) becomes the whole run.
		cfg.Keys = 100 + (i*37)%1000
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
			opts := history.DefaultOptions()
			opts.Level = lv
			if i%2 == 1 {
				opts.Skew = 1000
			}
			began := time.Now()
			// Odd histories skip the strict pre-check, so that the
			// weaker levels' own search is held to "no anomaly" too.
			res, err := Check(context.Background(), h, opts, Config{noStricter: i%2 == 1})
			if err != nil {
				t.Fatal(err)
			}
			// -v shows where a long run spends its time.
			t.Logf("history %d (%s, %d txns, %d keys) %s: %s in %v, %d conflicts", i, presets[i%len(presets)], len(h.Txns), cfg.Keys, lv, res.Verdict, time.Since(began).Round(time.Millisecond), res.Stats.Conflicts)
			if res.Verdict != Valid {
				t.Fatalf("history %d (%s, %d txns, seed %d) %s: %s %+v", i, presets[i%len(presets)], len(h.Txns), cfg.Seed, lv, res.Verdict, res.Anomalies)
			}
		}
	}
}

// TestInjectedAnomalies: every injected type is found with its name and a
// core equal to the injected transactions (the generator makes them the
// only minimal core).
func TestInjectedAnomalies(t *testing.T) {
	for _, typ := range gen.InjectTypes() {
		t.Run(typ, func(t *testing.T) {
			cfg, _ := gen.Preset("mixed")
			cfg.Txns = envInt("STREAMCHECK_INJECT_TXNS", 300)
			cfg.Inject = []string{typ}
			cfg.Seed = 42
			h, inj, err := gen.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			opts := history.DefaultOptions()
			opts.Level = history.Serializable
			if typ == gen.StaleRead {
				opts.Level = history.StrictSerializable
			}
			res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 10})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != Invalid || len(res.Anomalies) != 1 {
				t.Fatalf("want exactly one anomaly, got %s with %d: %+v", res.Verdict, len(res.Anomalies), res.Anomalies)
			}
			a := res.Anomalies[0]
			want := slices.Sorted(slices.Values(inj[0].Txns))
			got := slices.Sorted(slices.Values(a.Core))
			if !slices.Equal(got, want) {
				t.Errorf("core %v, injected %v", got, want)
			}
			wantType := typ
			if typ == history.GSingle {
				wantType = history.ReadSkew // two transactions: the familiar name
			}
			if a.Type != wantType {
				t.Errorf("type %s (class %s), want %s; explanation:\n%v", a.Type, a.Class, wantType, a.Text)
			}
		})
	}
}

// TestCancelledContextGivesUnknown: a cancelled context stops the encoding
// too (its pair loops are quadratic without real time), and the verdict is
// unknown, never a guess.
func TestCancelledContextGivesUnknown(t *testing.T) {
	cfg, _ := gen.Preset("mixed")
	cfg.Txns, cfg.Keys, cfg.Seed = 2000, 20, 1
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Check(ctx, h, history.DefaultOptions(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Unknown {
		t.Fatalf("verdict %s with a cancelled context", res.Verdict)
	}
}

package gen

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// TestGenerateStamps: the simulated store's stamps are its own execution
// order, so the facts' witness settles its histories at every level (the
// witness replays), snapshot isolation included; the history apart from
// the facts is the one GenerateStream writes; an injected anomaly is
// still found (the injected transactions carry no stamps, so the
// checker searches).
func TestGenerateStamps(t *testing.T) {
	cfg := Config{Txns: 3000, Seed: 7, UnknownRatio: 0}
	h, _, err := GenerateStamps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Txns) != len(h.Txns) || plain.Txns[100].ID != h.Txns[100].ID || h.ValidateFacts() != nil {
		t.Fatalf("stamped history differs from the plain one")
	}
	for _, lv := range []history.Level{history.Serializable, history.StrictSerializable} {
		opts := history.DefaultOptions()
		opts.Level = lv
		f := stampcheck.CheckSerial(h, opts)
		if f.Outcome != stampcheck.Witnessed {
			t.Fatalf("%s: %v (%s)", lv, f.Outcome, f.Why)
		}
		ids := make([]string, len(f.Order))
		for i, x := range f.Order {
			ids[i] = h.Txns[x].ID
		}
		if err := oracle.ReplayWitness(h, opts, ids); err != nil {
			t.Fatalf("%s: witness: %v", lv, err)
		}
	}
	if f := stampcheck.CheckSnapshot(h, history.DefaultOptions(), stampcheck.SnapshotRules{Session: true, RealTime: true}); f.Outcome != stampcheck.Witnessed {
		t.Fatalf("snapshot: %v (%s)", f.Outcome, f.Why)
	}

	cfg.Txns, cfg.Inject = 400, []string{"lost-update"}
	hi, _, err := GenerateStamps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := stampcheck.Check(context.Background(), hi, history.DefaultOptions(), incremental.Config{})
	if err != nil || rep.Result.Verdict != incremental.Invalid || rep.Inconsistent != nil {
		t.Fatalf("injected lost update: %v %v", rep, err)
	}
}

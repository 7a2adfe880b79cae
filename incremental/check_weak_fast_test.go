package incremental

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// weakBoth checks h at opts on the fast path's side (fast on) and with
// it off (the general path alone), and fails unless both give the same
// verdict, witness, read count and anomalies. It reports whether the
// fast path answered.
func weakBoth(t *testing.T, name string, h *history.History, opts history.Options) (fast bool) {
	t.Helper()
	ctx := context.Background()
	_, fast = checkWeakFast(ctx, h, opts)
	on, err := Check(ctx, h, opts, Config{MaxAnomalies: 3})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	weakFastOff = true
	off, err := Check(ctx, h, opts, Config{MaxAnomalies: 3})
	weakFastOff = false
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if on.Verdict != off.Verdict || !slices.Equal(on.Witness, off.Witness) || on.Stats.Reads != off.Stats.Reads || on.Stats.Txns != off.Stats.Txns {
		t.Fatalf("%s at %s: fast path on %s (reads %d, witness %v), off %s (reads %d, witness %v)",
			name, opts.Level, on.Verdict, on.Stats.Reads, clipIDs(on.Witness), off.Verdict, off.Stats.Reads, clipIDs(off.Witness))
	}
	if a, b := anomalyText(on), anomalyText(off); a != b {
		t.Fatalf("%s at %s: anomalies differ:\non:  %s\noff: %s", name, opts.Level, a, b)
	}
	return fast
}

func clipIDs(ids []string) []string {
	if len(ids) > 12 {
		return ids[:12]
	}
	return ids
}

func anomalyText(r *Result) string {
	var b strings.Builder
	for _, a := range r.Anomalies {
		fmt.Fprintf(&b, "%s %s %v %q; ", a.Type, a.Class, a.Core, a.Text)
	}
	return b.String()
}

// weakFastLevels are the levels the fast path serves.
var weakFastLevels = []history.Level{history.ReadCommitted, history.ReadAtomic, history.Causal}

// TestWeakFastSameAsGeneral: on generated histories (unique and
// repeated values, aborted and unknown outcomes, lists, injected
// anomalies, shapes valid only at a weaker level) the fast path on and
// off give the same verdict, witness, read count and anomalies at each
// weak level, and the fast path answers the determined valid ones.
func TestWeakFastSameAsGeneral(t *testing.T) {
	answered := 0
	for i := range 48 {
		cfg := gen.Config{Txns: 40 + 37*(i%7), Sessions: 2 + i%5, Keys: 4 + 3*(i%6), OpsPerTxn: 2 + i%4,
			ReadRatio: 0.5, Concurrency: 2, Seed: uint64(i + 1)}
		switch i % 6 {
		case 1:
			cfg.AbortRatio = 0.1
		case 2:
			cfg.DupValueRatio = 0.2
		case 3:
			cfg.UnknownRatio = 0.05
		case 4:
			cfg.InjectRate = 0.05
			cfg.Inject = []string{history.G1a, history.G1b, history.Internal, history.G1c, history.GarbageRead}
		case 5:
			cfg.ValidAt = []string{"read-committed", "read-atomic", "causal"}[i%3]
		}
		if i%8 == 7 {
			cfg.ListRatio = 0.2
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, lv := range weakFastLevels {
			opts := history.DefaultOptions()
			opts.Level = lv
			if weakBoth(t, fmt.Sprintf("generated %d", i), h, opts) {
				answered++
			}
		}
	}
	if answered < 30 {
		t.Fatalf("the fast path answered %d of 144 checks: it is not being exercised", answered)
	}
}

// weakHist builds a history from lines "id session op..." where an op
// is r:key:value, w:key:value (value "null" for the initial state); an
// id ending in "!" is aborted, in "?" unknown; session "-" is none.
func weakHist(lines ...string) *history.History {
	h := &history.History{}
	for _, l := range lines {
		f := strings.Fields(l)
		t := history.Txn{ID: f[0], Session: f[1], HasSession: f[1] != "-"}
		switch {
		case strings.HasSuffix(t.ID, "!"):
			t.Status = history.Aborted
		case strings.HasSuffix(t.ID, "?"):
			t.Status = history.Unknown
		}
		for _, o := range f[2:] {
			p := strings.SplitN(o, ":", 3)
			op := history.Op{Kind: history.Read, Key: history.Value(p[1]), Value: history.Value(p[2])}
			if p[0] == "w" {
				op.Kind = history.Write
			}
			t.Ops = append(t.Ops, op)
		}
		h.Txns = append(h.Txns, t)
	}
	return h
}

// TestWeakFastRules: histories each of which a naive fast path (every
// write a source, every read external, every read counted) gets wrong;
// want is the verdict at each of read-committed, read-atomic, causal.
func TestWeakFastRules(t *testing.T) {
	for _, c := range []struct {
		name string
		h    *history.History
		want [3]Verdict
		fast bool // the fast path answers (at every level it is valid at)
	}{
		{"determined, valid", weakHist("a s1 w:1:1 w:2:5", "b s2 r:1:1 r:2:5 w:1:2", "c s1 r:1:2 r:2:null"),
			[3]Verdict{Valid, Invalid, Invalid}, true},
		{"an intermediate write read (G1b)", weakHist("a s1 w:1:1 w:1:2", "b s2 r:1:1"),
			[3]Verdict{Invalid, Invalid, Invalid}, false},
		{"an intermediate write of a text value read (G1b)", weakHist("a s1 w:x:p w:x:q", "b s2 r:x:p"),
			[3]Verdict{Invalid, Invalid, Invalid}, false},
		{"a read of its own later write", weakHist("a s1 r:1:1 w:1:1"),
			[3]Verdict{Invalid, Invalid, Invalid}, false},
		{"an internal read of another value", weakHist("a s1 w:1:1 r:1:2", "b s2 w:1:2"),
			[3]Verdict{Invalid, Invalid, Invalid}, false},
		{"an aborted write read (G1a)", weakHist("a! s1 w:1:1", "b s2 r:1:1"),
			[3]Verdict{Invalid, Invalid, Invalid}, false},
		{"a later transaction of the session read (read committed has no session order)", weakHist("a s1 r:1:1", "b s1 w:1:1"),
			[3]Verdict{Valid, Invalid, Invalid}, true},
		{"a value written twice", weakHist("a s1 w:1:1", "b s2 w:1:1", "c s3 r:1:1"),
			[3]Verdict{Valid, Valid, Valid}, false},
		{"an unknown writer", weakHist("a? s1 w:1:1", "b s2 r:1:1"),
			[3]Verdict{Valid, Valid, Valid}, false},
		{"reads counted once per value", weakHist("a s1 w:1:1", "b s2 r:1:1 r:1:1 r:2:null r:2:null", "c! s3 r:1:1 r:1:1"),
			[3]Verdict{Valid, Valid, Valid}, true},
		{"a read of a value never written", weakHist("a s1 w:1:1", "b s2 r:1:7"),
			[3]Verdict{Invalid, Invalid, Invalid}, false},
		{"scattered and text values, text keys", weakHist("a s1 w:1:900000 w:k:v", "b s2 r:1:900000 r:k:v w:1:3", "c - r:1:3 w:k:w"),
			[3]Verdict{Valid, Valid, Valid}, true},
		{"a fractured read", weakHist("a s1 w:1:1 w:2:1", "b s2 w:1:2 w:2:2", "c s3 r:1:1 r:2:2"),
			[3]Verdict{Valid, Invalid, Invalid}, true},
		{"an integer key beside its text spelling", weakHist("a s1 w:01:1 w:1:1", "b s2 r:01:1 r:1:1"),
			[3]Verdict{Valid, Valid, Valid}, true},
	} {
		for i, lv := range weakFastLevels {
			opts := history.DefaultOptions()
			opts.Level = lv
			fast := weakBoth(t, c.name, c.h, opts)
			weakFastOff = true
			res, err := Check(context.Background(), c.h, opts, Config{})
			weakFastOff = false
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.want[i] {
				t.Errorf("%s at %s: %s, want %s", c.name, lv, res.Verdict, c.want[i])
			}
			if fast != (c.fast && c.want[i] == Valid) {
				t.Errorf("%s at %s: the fast path answered: %v", c.name, lv, fast)
			}
		}
	}
}

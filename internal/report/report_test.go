package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.*")

// goldenResult is a hand-built result with every field set, so that the
// golden files pin each JSON field name (R1) and the text and DOT layout.
func goldenResult(t *testing.T) (*incremental.Result, *history.History) {
	t.Helper()
	h, err := history.ParseCompact(`
W[0,100] w x 1, w y 1 (session c1)
A[110,200] r x 1, w x 2 (session c2)
B[120,210] r x 1, w x 2 (session c3)
Z w "quote\"d" 1 (unknown)
`)
	if err != nil {
		t.Fatal(err)
	}
	h.Txns[1].Pos = history.Pos{Source: "h.jsonl", Line: 2}
	// An id the compact notation cannot spell, for the escaping of labels.
	h.Txns[3].ID = `Z "q"\`
	res := &incremental.Result{
		Verdict: incremental.Invalid,
		Options: history.Options{Level: history.StrictSerializable, Skew: 1500, InDoubt: history.NoInDoubt},
		Anomalies: []incremental.Anomaly{{
			Type:  history.LostUpdate,
			Class: history.GSingle,
			Core:  []string{"A", "B", "W", `Z "q"\`, "gone"},
			Forced: []incremental.Forced{
				{Order: "W must precede A", Cycle: []incremental.Step{
					{From: "A", To: "W", Kind: "ww", Why: "A's writes come before W's in version order, so A ww-> W"},
					{From: "W", To: "A", Kind: "wr", Key: "x", Why: "A read x=1 written by W, so W wr-> A"},
				}},
				{Order: `Z "q"\ cannot have committed`, Cycle: nil},
				{Order: `A must precede Z "q"\`, Cycle: nil},
			},
			Cycle: []incremental.Step{
				{From: "A", To: "B", Kind: "rw", Key: "x", Why: "A read W's version of x and B wrote x over it, so A rw-> B"},
				{From: "B", To: "A", Kind: "ww", Key: "x", Why: `B's "writes" come before A's\in version order, so B ww-> A`},
			},
			Text: []string{"W must precede A, because ...", "That closes the cycle A -rw-> B -ww-> A."},
		}},
		Stats: incremental.Stats{Txns: 4, Reads: 2, Pairs: 3, Vars: 7, Nodes: 4, Conflicts: 2, CoreChecks: 5,
			EncodeTime: time.Millisecond, SolveTime: 2 * time.Microsecond, CoreTime: 3 * time.Second},
	}
	return res, h
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGolden(t *testing.T) {
	res, h := goldenResult(t)
	r := New(res, h)
	r.MaxAnomalies = 10
	var j bytes.Buffer
	if err := WriteJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", j.Bytes())
	var txt bytes.Buffer
	if err := WriteText(&txt, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.txt", txt.Bytes())
	golden(t, "anomaly.golden.dot", DOT(r.Anomalies[0]))
}

// TestJSONShape decodes the output generically: every verdict's report
// has exactly the documented top-level fields, and R2's nulls.
func TestJSONShape(t *testing.T) {
	want := []string{"anomalies", "indoubt_ns", "initial_state", "level", "max_anomalies", "skew_ns", "stats", "txns", "valid", "verdict"}
	for _, v := range []incremental.Verdict{incremental.Valid, incremental.Invalid, incremental.Unknown} {
		for _, indoubt := range []int64{history.NoInDoubt, 0, 5} {
			res := &incremental.Result{Verdict: v, Options: history.Options{InDoubt: indoubt}}
			r := New(res, &history.History{})
			r.MaxAnomalies = 1
			var b bytes.Buffer
			if err := WriteJSON(&b, r); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			if strings.Join(sorted(keys), ",") != strings.Join(want, ",") {
				t.Errorf("%v: keys %v, want %v", v, sorted(keys), want)
			}
			wantValid := map[incremental.Verdict]any{incremental.Valid: true, incremental.Invalid: false, incremental.Unknown: nil}[v]
			if m["valid"] != wantValid || m["verdict"] != v.String() {
				t.Errorf("%v: valid %v verdict %v", v, m["valid"], m["verdict"])
			}
			if (m["indoubt_ns"] == nil) != (indoubt == history.NoInDoubt) {
				t.Errorf("indoubt %d: indoubt_ns %v", indoubt, m["indoubt_ns"])
			}
			if a, ok := m["anomalies"].([]any); !ok || len(a) != 0 {
				t.Errorf("anomalies %v, want []", m["anomalies"])
			}
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestReportsOfRealChecks renders the checker's results on random tiny
// histories and checks each report against the history it came from:
// the core transactions' compact text parses back to the recorded ops
// (history.ParseCompact is the oracle for the notation), JSON round-trips
// to an equal Report, the text states the options (T1) and every
// explanation line, and the DOT graph has one node per transaction
// involved and one edge per step.
func TestReportsOfRealChecks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cfg := oracle.DefaultTinyConfig()
	levels := []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable}
	var anomalies, valid int
	for i := 0; i < 400; i++ {
		h := oracle.RandomTiny(rng, cfg)
		opts := history.DefaultOptions()
		opts.Level = levels[i%len(levels)]
		if i%4 == 1 {
			opts.Skew = int64(rng.IntN(20))
			opts.InDoubt = int64(rng.IntN(50))
		}
		if i%5 == 2 {
			opts.InitialState = history.InitialUnknown
		}
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 3})
		if err != nil {
			t.Fatalf("history %d: %v", i, err)
		}
		r := New(res, h)
		checkReport(t, r, res, h)
		anomalies += len(r.Anomalies)
		if res.Verdict == incremental.Valid {
			valid++
		}
	}
	if anomalies < 50 || valid < 50 {
		t.Errorf("weak sample: %d anomalies, %d valid histories", anomalies, valid)
	}
}

func checkReport(t *testing.T, r *Report, res *incremental.Result, h *history.History) {
	t.Helper()
	byID := map[string]*history.Txn{}
	for i := range h.Txns {
		byID[h.Txns[i].ID] = &h.Txns[i]
	}
	if r.Txns != len(h.Txns) || r.Verdict != res.Verdict.String() {
		t.Fatalf("txns %d verdict %s, want %d %s", r.Txns, r.Verdict, len(h.Txns), res.Verdict)
	}
	// JSON round trip.
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, r) {
		t.Fatalf("JSON round trip changed the report:\n%+v\n%+v", back, *r)
	}
	// Text.
	var txt bytes.Buffer
	if err := WriteText(&txt, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(txt.String(), "\n")
	if !strings.Contains(first, "("+r.Conditions()+")") {
		t.Fatalf("verdict line %q lacks the options %q", first, r.Conditions())
	}
	for _, a := range r.Anomalies {
		for _, line := range a.Explanation {
			if !strings.Contains(txt.String(), "    "+line+"\n") {
				t.Fatalf("text lacks explanation line %q", line)
			}
		}
		if len(a.Txns) != len(a.Core) {
			t.Fatalf("%d txns for core %v", len(a.Txns), a.Core)
		}
		for k, tx := range a.Txns {
			orig := byID[a.Core[k]]
			if tx.ID != a.Core[k] || orig == nil {
				t.Fatalf("txn %q for core id %q", tx.ID, a.Core[k])
			}
			parsed, err := history.ParseCompact(tx.Compact)
			if err != nil || len(parsed.Txns) != 1 {
				t.Fatalf("compact %q: %v", tx.Compact, err)
			}
			p := parsed.Txns[0]
			if p.ID != orig.ID || p.Status != orig.Status || p.HasTime != orig.HasTime || p.Start != orig.Start || p.End != orig.End || !sameOps(p.Ops, orig.Ops) {
				t.Fatalf("compact %q does not give back %+v", tx.Compact, *orig)
			}
			if len(tx.Ops) != len(orig.Ops) {
				t.Fatalf("ops %v for %d ops", tx.Ops, len(orig.Ops))
			}
		}
		d := DOT(a)
		if !bytes.Equal(d, DOT(a)) {
			t.Fatal("DOT is not deterministic")
		}
		nodes, edges, dashed := countDOT(string(d))
		ids := map[string]bool{}
		for _, id := range a.Core {
			ids[id] = true
		}
		for _, s := range a.Cycle {
			ids[s.From], ids[s.To] = true, true
		}
		if nodes != len(ids) || edges-dashed != len(a.Cycle) {
			t.Fatalf("DOT has %d nodes, %d solid edges; want %d, %d:\n%s", nodes, edges-dashed, len(ids), len(a.Cycle), d)
		}
	}
}

// sameOps compares ops as the compact notation can carry them: it does
// not tell the string "1" from the number 1, and tiny histories use
// numbers only.
func sameOps(a, b []history.Op) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Key != y.Key || x.IsList != y.IsList || len(x.List) != len(y.List) {
			return false
		}
		if !x.IsList && x.Value != y.Value {
			return false
		}
		for j := range x.List {
			if x.List[j] != y.List[j] {
				return false
			}
		}
	}
	return true
}

// countDOT counts node and edge statements in DOT's own output layout
// (one statement per line, node names t0, t1, ...).
func countDOT(d string) (nodes, edges, dashed int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case edgeStmt.MatchString(l):
			edges++
			if strings.HasSuffix(l, ", style=dashed];") {
				dashed++
			}
		case nodeStmt.MatchString(l):
			nodes++
		}
	}
	return
}

var (
	edgeStmt = regexp.MustCompile(`^  t\d+(:[ew])? -> t\d+(:[ew])? \[`)
	nodeStmt = regexp.MustCompile(`^  t\d+ \[`)
)

func TestHeadlines(t *testing.T) {
	one := int64(1_500_000)
	r := &Report{Verdict: "invalid", Level: "serializable", SkewNS: 0, InDoubtNS: &one, InitialState: "unknown", Txns: 1,
		Anomalies: make([]Anomaly, 2), MaxAnomalies: 2}
	for _, c := range []struct {
		edit func(*Report)
		want string
	}{
		{func(r *Report) {}, "INVALID: not serializable (level serializable, skew 0s, in-doubt 1.5ms, initial state unknown): 2 anomalies (the limit; there may be more) in 1 transaction"},
		{func(r *Report) { r.MaxAnomalies = 3 }, "INVALID: not serializable (level serializable, skew 0s, in-doubt 1.5ms, initial state unknown): 2 anomalies in 1 transaction"},
		{func(r *Report) { r.MaxAnomalies, r.Stats.TimedOut = 0, true }, "INVALID: not serializable (level serializable, skew 0s, in-doubt 1.5ms, initial state unknown): 2 anomalies (the time budget ran out; there may be more) in 1 transaction"},
		{func(r *Report) { r.Anomalies = nil }, "INVALID: not serializable (level serializable, skew 0s, in-doubt 1.5ms, initial state unknown): violation proven; the time budget ran out before a core was extracted in 1 transaction"},
		{func(r *Report) { r.Verdict, r.Txns, r.InDoubtNS = "valid", 3, nil }, "VALID: serializable (level serializable, skew 0s, in-doubt ∞, initial state unknown) — 3 transactions; hint"},
		{func(r *Report) { r.Verdict, r.SkewNS = "unknown", 7 }, "UNKNOWN: serializable not decided within the time budget (level serializable, skew 7ns, in-doubt ∞, initial state unknown) — 3 transactions, no anomaly found"},
	} {
		c.edit(r)
		if got := r.Headline(TextOptions{ValidHint: "hint"}); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

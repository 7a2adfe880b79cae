package checkcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// TestFactsEndToEnd runs check on native histories with commit stamps:
// the facts' witness settles a valid history; a history valid at the
// level whose stamps contradict a read is reported in its own class with
// its minimal set and exits 1; an anomaly stays an anomaly of the level,
// whatever the stamps (docs/SEMANTICS.md §10).
func TestFactsEndToEnd(t *testing.T) {
	for _, c := range []struct {
		name, in string
		code     int
		want     []string
		incons   []string
	}{
		{"witness", `{"id":"a","status":"committed","commit_ts":1,"ops":[["w","x",1]]}
{"id":"b","status":"committed","commit_ts":2,"ops":[["r","x",1],["w","x",2]]}
{"id":"c","status":"committed","commit_ts":3,"ops":[["r","x",2]]}
`, ExitValid, []string{"VALID", "their witness"}, nil},
		// b read x=1 from a, so a < b in every serial order; the stamps
		// claim b committed first. Serializable (a b c), but not with the
		// stamps; c takes no part.
		{"inconsistent", `{"id":"a","status":"committed","commit_ts":5,"ops":[["w","x",1]]}
{"id":"b","status":"committed","commit_ts":2,"ops":[["r","x",1]]}
{"id":"c","status":"committed","commit_ts":9,"ops":[["w","y",1]]}
`, ExitAnomaly, []string{"VALID", "STAMPS INCONSISTENT WITH READS", "set: a, b", "commit_ts=5"}, []string{"a", "b"}},
		// A lost update: invalid whatever the stamps say.
		{"anomaly", `{"id":"a","status":"committed","commit_ts":1,"ops":[["r","x",null],["w","x",1]]}
{"id":"b","status":"committed","commit_ts":2,"ops":[["r","x",null],["w","x",2]]}
`, ExitAnomaly, []string{"INVALID"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main([]string{"-"}, nil, strings.NewReader(c.in), &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out.String(), errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			out.Reset()
			Main([]string{"--format", "json", "-"}, nil, strings.NewReader(c.in), &out, &errb)
			var rep report.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Facts == nil {
				t.Fatalf("no facts section:\n%s", out.String())
			}
			var got []string
			if rep.Facts.Inconsistent != nil {
				got = rep.Facts.Inconsistent.Core
			}
			if strings.Join(got, ",") != strings.Join(c.incons, ",") {
				t.Errorf("inconsistent set %v, want %v", got, c.incons)
			}
		})
	}
}

// TestFactsSnapshotLevels runs check at the snapshot levels on histories
// with commit and snapshot stamps, each level's real-time rule apart:
// strong SI wants a transaction that finished before b began in b's
// snapshot (C_a before B_b: commit_ts(a) < start_ts(b)), GSI only that it
// commits first (C_a before C_b: commit_ts(a) < commit_ts(b)), plain SI
// and strong session SI neither (docs/SEMANTICS.md §10). a = [0,10] and
// b = [20,30] in real time touch different keys, so every level holds
// black-box and only the stamps can be inconsistent, in a set {a, b}.
func TestFactsSnapshotLevels(t *testing.T) {
	// b's snapshot (start_ts 4) misses a (commit_ts 5), b commits after a.
	missed := `{"id":"a","start":0,"end":10,"status":"committed","start_ts":1,"commit_ts":5,"ops":[["w","x",1]]}
{"id":"b","start":20,"end":30,"status":"committed","start_ts":4,"commit_ts":8,"ops":[["w","y",1]]}
`
	// b commits (3) before a (5), although a finished before b began.
	inverted := `{"id":"a","start":0,"end":10,"status":"committed","start_ts":1,"commit_ts":5,"ops":[["w","x",1]]}
{"id":"b","start":20,"end":30,"status":"committed","start_ts":2,"commit_ts":3,"ops":[["w","y",1]]}
`
	for _, c := range []struct {
		level, in string
		incons    bool
	}{
		{"snapshot-isolation", missed, false},
		{"strong-session-snapshot-isolation", missed, false},
		{"generalized-snapshot-isolation", missed, false},
		{"strong-snapshot-isolation", missed, true},
		{"snapshot-isolation", inverted, false},
		{"strong-session-snapshot-isolation", inverted, false},
		{"generalized-snapshot-isolation", inverted, true},
		{"strong-snapshot-isolation", inverted, true},
	} {
		name := "missed"
		if c.in == inverted {
			name = "inverted"
		}
		t.Run(c.level+"/"+name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main([]string{"--level", c.level, "--format", "json", "-"}, nil, strings.NewReader(c.in), &out, &errb)
			var rep report.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
			}
			if rep.Facts == nil {
				t.Fatalf("no facts section:\n%s", out.String())
			}
			if c.incons {
				if code != ExitAnomaly || rep.Facts.Inconsistent == nil || strings.Join(rep.Facts.Inconsistent.Core, ",") != "a,b" {
					t.Fatalf("exit %d, want %d with set [a b]:\n%s", code, ExitAnomaly, out.String())
				}
				return
			}
			if code != ExitValid || rep.Facts.Inconsistent != nil || !rep.Facts.ByFacts {
				t.Fatalf("exit %d, want %d by the facts' witness:\n%s", code, ExitValid, out.String())
			}
		})
	}
}

// TestFactsSnapshotWitness: at a snapshot level the facts' witness is a
// sequence of begin and commit events (the family's witness shape), each
// begin at its start_ts and each commit at its commit_ts.
func TestFactsSnapshotWitness(t *testing.T) {
	in := `{"id":"a","status":"committed","start_ts":1,"commit_ts":2,"ops":[["w","x",1]]}
{"id":"b","status":"committed","start_ts":2,"commit_ts":4,"ops":[["r","x",null],["w","y",1]]}
{"id":"c","status":"committed","start_ts":3,"commit_ts":5,"ops":[["r","x",1],["r","y",null]]}
`
	dir := t.TempDir()
	w := dir + "/w.txt"
	var out, errb bytes.Buffer
	if code := Main([]string{"--level", "snapshot-isolation", "--witness", w, "-"}, nil, strings.NewReader(in), &out, &errb); code != ExitValid {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	got, err := os.ReadFile(w)
	if err != nil {
		t.Fatal(err)
	}
	want := "begin a\nbegin b\ncommit a\nbegin c\ncommit b\ncommit c\n"
	if string(got) != want {
		t.Fatalf("witness\n%s\nwant\n%s", got, want)
	}
}

const pgFactsFixture = "../../testdata/real/facts-postgres15-repeatable-read.jsonl.gz"

// TestFactsPostgresFixture checks a canary recording of PostgreSQL 15 at
// REPEATABLE READ with its facts (xid and snapshot per transaction;
// testdata/real/README.md) as check does, without a server: at the
// snapshot levels the facts settle it (valid, their witness, consistent
// with every read); at serializable it is invalid (a write skew), with the
// facts consistent; each verdict is the black-box one on the same history
// without its facts. Then one snapshot is made to miss the writer of a
// value its transaction read: the level still holds black-box, and the
// facts are reported inconsistent, with a set that holds the two.
func TestFactsPostgresFixture(t *testing.T) {
	h, _, err := ingest.ReadFile(pgFactsFixture)
	if err != nil {
		t.Fatal(err)
	}
	plain := &history.History{Txns: h.Txns}
	for _, c := range []struct {
		level  history.Level
		code   int
		byFact bool
	}{
		{history.SnapshotIsolation, ExitValid, true},
		{history.StrongSessionSnapshotIsolation, ExitValid, true},
		{history.Serializable, ExitAnomaly, false},
	} {
		t.Run(c.level.String(), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main([]string{"--level", c.level.String(), "--format", "json", pgFactsFixture}, nil, nil, &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out.String(), errb.String())
			}
			var rep report.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Facts == nil || rep.Facts.Inconsistent != nil || rep.Facts.ByFacts != c.byFact {
				t.Fatalf("facts section %+v, want consistent, by facts %v", rep.Facts, c.byFact)
			}
			opts := history.DefaultOptions()
			opts.Level = c.level
			black, err := incremental.Check(context.Background(), plain, opts, incremental.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if (black.Verdict == incremental.Valid) != (c.code == ExitValid) {
				t.Fatalf("black box %v, check with facts exit %d", black.Verdict, code)
			}
		})
	}

	// A committed reader r of a value written by committed w (w != r);
	// r's snapshot is made to miss w.
	byXid := map[uint64]int{}
	for i := range h.Txns {
		byXid[h.Facts[i].Xid] = i
	}
	r, w := -1, -1
	for i := range h.Txns {
		if h.Txns[i].Status != history.Committed || r >= 0 {
			continue
		}
		for _, op := range h.Txns[i].Ops {
			if op.Kind != history.Read || op.IsList || op.Value == history.Null {
				continue
			}
			for j := range h.Txns {
				if j == i || h.Txns[j].Status != history.Committed {
					continue
				}
				for _, o := range h.Txns[j].Ops {
					if o.Kind == history.Write && o.Key == op.Key && o.Value == op.Value {
						r, w = i, j
					}
				}
			}
			if r >= 0 {
				break
			}
		}
	}
	if r < 0 {
		t.Fatal("the fixture has no read of another transaction's write")
	}
	bad := &history.History{Txns: h.Txns, Facts: slices.Clone(h.Facts)}
	snap := *bad.Facts[r].Snap
	x := bad.Facts[w].Xid
	snap.Xip = append(slices.Clone(snap.Xip), x)
	slices.Sort(snap.Xip)
	snap.Xmin = min(snap.Xmin, x)
	bad.Facts[r].Snap = &snap
	opts := history.DefaultOptions()
	opts.Level = history.SnapshotIsolation
	bb := func(ctx context.Context, h *history.History, opts history.Options) (*incremental.Result, error) {
		return incremental.Check(ctx, h, opts, incremental.Config{})
	}
	rep, err := stampcheck.CheckSnapshotLevel(context.Background(), bad, opts, stampcheck.RulesFor(opts.Level), bb)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Verdict != incremental.Valid || !slices.Contains(rep.Inconsistent, h.Txns[r].ID) || !slices.Contains(rep.Inconsistent, h.Txns[w].ID) {
		t.Fatalf("%s's snapshot made to miss %s: %v (%s)", h.Txns[r].ID, h.Txns[w].ID, rep, rep.Why)
	}
	t.Logf("%s's snapshot made to miss %s: %v", h.Txns[r].ID, h.Txns[w].ID, rep)
}

// TestFactsNeedTimestamps: at a level with real-time order, a history
// without client timestamps is an input error (exit 2) whatever its facts
// say, as without them; the facts' witness does not make it valid.
func TestFactsNeedTimestamps(t *testing.T) {
	in := `{"id":"a","status":"committed","start_ts":1,"commit_ts":2,"ops":[["w","x",1]]}
{"id":"b","status":"committed","start_ts":3,"commit_ts":4,"ops":[["r","x",1]]}
`
	for _, lv := range []string{"strict-serializable", "generalized-snapshot-isolation", "strong-snapshot-isolation"} {
		var out, errb bytes.Buffer
		code := Main([]string{"--level", lv, "-"}, nil, strings.NewReader(in), &out, &errb)
		if code != ExitError || !strings.Contains(errb.String(), "needs timestamps") {
			t.Errorf("%s: exit %d, want %d naming the missing timestamps\n%s%s", lv, code, ExitError, out.String(), errb.String())
		}
	}
}

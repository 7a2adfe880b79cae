package gen

import (
	"fmt"
	"sort"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// This file holds the tests' oracles, written independently of the
// generator: a replay in the generator's execution order, and a brute
// force over serial orders with docs/SEMANTICS.md §3's projection.

// record is one generated transaction with what the simulation knew.
type record struct {
	t history.Txn
	m meta
}

func collect(t *testing.T, cfg Config) ([]record, []Injected) {
	t.Helper()
	var out []record
	inj, err := run(cfg, func(tx *history.Txn, m meta) error {
		out = append(out, record{*tx, m})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, inj
}

// replayExecOrder replays base transactions in execution order against
// plain maps and returns the first read that disagrees, so a nil result
// proves the history strict serializable: the execution order is a serial
// order that extends real time and session order (checked too) in which
// every read, of every status, returns what it returned.
func replayExecOrder(recs []record) error {
	var base []record
	for _, r := range recs {
		if r.m.inj < 0 {
			base = append(base, r)
		}
	}
	sort.Slice(base, func(i, j int) bool { return base[i].m.exec < base[j].m.exec })
	reg := map[history.Key]history.Value{}
	lists := map[history.Key][]history.Value{}
	lastCommit := int64(-1 << 63)
	for _, r := range base {
		t := &r.t
		if !(t.Start < r.m.commit && r.m.commit < t.End) {
			return fmt.Errorf("%s: commit %d not inside (%d, %d)", t.ID, r.m.commit, t.Start, t.End)
		}
		if r.m.commit < lastCommit {
			return fmt.Errorf("%s: executed at %d after a transaction that committed at %d", t.ID, r.m.commit, lastCommit)
		}
		lastCommit = r.m.commit
		switch {
		case t.Status == history.Aborted && r.m.visible, t.Status == history.Committed && !r.m.visible:
			return fmt.Errorf("%s: status %v but visible=%v", t.ID, t.Status, r.m.visible)
		}
		ownReg := map[history.Key]history.Value{}
		ownList := map[history.Key][]history.Value{}
		for i, op := range t.Ops {
			switch {
			case op.Kind == history.Write:
				ownReg[op.Key] = op.Value
			case op.Kind == history.Append:
				ownList[op.Key] = append(ownList[op.Key], op.Value)
			case op.IsList:
				want := append(append([]history.Value(nil), lists[op.Key]...), ownList[op.Key]...)
				if fmt.Sprint(want) != fmt.Sprint(op.List) {
					return fmt.Errorf("%s op %d: read %s = %v, store holds %v", t.ID, i, op.Key, op.List, want)
				}
			default:
				want, ok := ownReg[op.Key]
				if !ok {
					want, ok = reg[op.Key]
				}
				if !ok {
					want = history.Null
				}
				if op.Value != want {
					return fmt.Errorf("%s op %d: read %s = %s, store holds %s", t.ID, i, op.Key, op.Value, want)
				}
			}
		}
		if r.m.visible {
			for k, v := range ownReg {
				reg[k] = v
			}
			for k, vs := range ownList {
				lists[k] = append(lists[k], vs...)
			}
		}
	}
	return checkSessions(base)
}

// checkSessions: a session's transactions run one after another.
func checkSessions(recs []record) error {
	last := map[string]*history.Txn{}
	byStart := append([]record(nil), recs...)
	sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].t.Start < byStart[j].t.Start })
	for i := range byStart {
		t := &byStart[i].t
		if p := last[t.Session]; p != nil && p.End > t.Start {
			return fmt.Errorf("session %s: %s [%d,%d] overlaps %s [%d,%d]", t.Session, p.ID, p.Start, p.End, t.ID, t.Start, t.End)
		}
		last[t.Session] = t
	}
	return nil
}

// project applies docs/SEMANTICS.md §3 to core within all: a read stays iff
// every possible writer of what it returned is in the core, or it has no
// writer at all, or it follows its own transaction's write of the key.
// Under strict levels a writer that follows the reader in real time, or
// later in its session, is not possible.
func project(core, all []history.Txn, strict bool) []history.Txn {
	in := map[string]bool{}
	for _, t := range core {
		in[t.ID] = true
	}
	opts := history.Options{Level: history.StrictSerializable, InDoubt: history.NoInDoubt}
	possible := func(reader *history.Txn, w *history.Txn) bool {
		if !strict || w.ID == reader.ID {
			return true
		}
		if opts.Precedes(reader, w) {
			return false
		}
		return !(w.Session == reader.Session && w.Start > reader.Start)
	}
	// writersInCore: every possible writer of (k, v) by kind is in core.
	writersInCore := func(reader *history.Txn, kind history.Kind, k history.Key, v history.Value) (bool, int) {
		n := 0
		for i := range all {
			w := &all[i]
			for _, op := range w.Ops {
				if op.Kind == kind && op.Key == k && op.Value == v && possible(reader, w) {
					n++
					if !in[w.ID] {
						return false, n
					}
					break
				}
			}
		}
		return true, n
	}
	out := make([]history.Txn, len(core))
	for i, t := range core {
		nt := t
		nt.Ops = nil
		for j, op := range t.Ops {
			if op.Kind != history.Read {
				nt.Ops = append(nt.Ops, op)
				continue
			}
			// Only a register read after the transaction's own write is
			// decided by the transaction alone; a list read still shows
			// other appenders' elements.
			own := false
			for _, prev := range t.Ops[:j] {
				if prev.Key == op.Key && prev.Kind == history.Write && !op.IsList {
					own = true
				}
			}
			keep := own
			if !own {
				if op.IsList {
					keep = true
					for _, e := range op.List {
						if ok, _ := writersInCore(&t, history.Append, op.Key, e); !ok {
							keep = false
						}
					}
				} else if op.Value == history.Null {
					// The initial state is an always-present writer.
					keep, _ = writersInCore(&t, history.Write, op.Key, op.Value)
				} else {
					ok, n := writersInCore(&t, history.Write, op.Key, op.Value)
					keep = ok || n == 0
				}
			}
			if keep {
				nt.Ops = append(nt.Ops, op)
			}
		}
		out[i] = nt
	}
	return out
}

// bruteValid reports whether some serial order of the committed
// transactions (under strict: one extending real time and session order)
// reproduces every read, trying each subset of unknown transactions as
// committed (docs/SEMANTICS.md §4). Depth-first with early failure: a partial
// order whose last transaction misreads is abandoned.
func bruteValid(txns []history.Txn, strict bool) bool {
	var unknown []int
	for i := range txns {
		if txns[i].Status == history.Unknown {
			unknown = append(unknown, i)
		}
	}
	for mask := 0; mask < 1<<len(unknown); mask++ {
		var run []*history.Txn
		for i := range txns {
			switch txns[i].Status {
			case history.Committed:
				run = append(run, &txns[i])
			case history.Unknown:
				for b, u := range unknown {
					if u == i && mask&(1<<b) != 0 {
						run = append(run, &txns[i])
					}
				}
			}
		}
		if serialOrderExists(run, strict) {
			return true
		}
	}
	return false
}

func serialOrderExists(run []*history.Txn, strict bool) bool {
	n := len(run)
	opts := history.Options{Level: history.StrictSerializable, InDoubt: history.NoInDoubt}
	before := make([][]bool, n) // before[i][j]: i must come before j
	for i := range before {
		before[i] = make([]bool, n)
		for j := range before[i] {
			a, b := run[i], run[j]
			if strict && i != j && (opts.Precedes(a, b) || (a.HasSession && a.Session == b.Session && a.Start < b.Start)) {
				before[i][j] = true
			}
		}
	}
	placed := make([]bool, n)
	reg := map[history.Key]history.Value{}
	lists := map[history.Key][]history.Value{}
	var dfs func(k int) bool
	dfs = func(k int) bool {
		if k == n {
			return true
		}
		for i := 0; i < n; i++ {
			if placed[i] {
				continue
			}
			ready := true
			for j := 0; j < n; j++ {
				if !placed[j] && before[j][i] {
					ready = false
				}
			}
			if !ready {
				continue
			}
			// Apply run[i], checking its reads; undo afterwards.
			savedReg := map[history.Key]*history.Value{}
			savedList := map[history.Key][]history.Value{}
			ok := true
			for _, op := range run[i].Ops {
				switch op.Kind {
				case history.Write:
					if _, seen := savedReg[op.Key]; !seen {
						if v, had := reg[op.Key]; had {
							savedReg[op.Key] = &v
						} else {
							savedReg[op.Key] = nil
						}
					}
					reg[op.Key] = op.Value
				case history.Append:
					if _, seen := savedList[op.Key]; !seen {
						savedList[op.Key] = lists[op.Key]
					}
					l := lists[op.Key]
					lists[op.Key] = append(l[:len(l):len(l)], op.Value)
				case history.Read:
					if op.IsList {
						ok = ok && fmt.Sprint(lists[op.Key]) == fmt.Sprint(op.List) && len(lists[op.Key]) == len(op.List)
					} else {
						v, had := reg[op.Key]
						if !had {
							v = history.Null
						}
						ok = ok && v == op.Value
					}
				}
			}
			if ok {
				placed[i] = true
				if dfs(k + 1) {
					return true
				}
				placed[i] = false
			}
			for key, v := range savedReg {
				if v == nil {
					delete(reg, key)
				} else {
					reg[key] = *v
				}
			}
			for key, l := range savedList {
				lists[key] = l
			}
		}
		return false
	}
	return dfs(0)
}

// TestOracleOnExactnessHistories makes sure the oracles themselves can
// fail, on the notes' histories with known verdicts.
func TestOracleOnExactnessHistories(t *testing.T) {
	for _, tc := range []struct {
		text        string
		ser, strict bool
	}{
		{"W[0,100] w x1 · T[10,20] r x1 · U[30,40] w x2 · R[50,60] r x1", true, false},                               // C
		{"T1[0,10] w x1 · T2[12,20] r x null", true, false},                                                          // stale read
		{"A[0,10] w x5 · C[20,30] w x6 · B[40,50] w x5 · R[60,70] r x5", true, true},                                 // J
		{"T1[0,10] w x2 (aborted) · T2[20,30] r x2", false, false},                                                   // CE1: G1a
		{"U[0,10] w x1 (unknown) · W[20,30] w x2 · R[40,50] r x1", true, true},                                       // H with e_U = +inf
		{"L[0,10] w x5, w z1 · W[5,100] r z1, w x5, w y7 · R[50,60] r x5, r y7", true, true},                         // E
		{"T1[0,10] r x null, w x1 · T2[0,10] r x null, w x2", false, false},                                          // lost update
		{"A[0,10] append l 1 · B[0,10] append l 2 · R[0,10] r l [1 2] · S[0,10] r l [2]", false, false},              // incompatible
		{"A[0,10] append l 1 · B[0,10] append l 2 · R[0,10] r l [2] · S[0,10] r l [2 1]", true, true},                // prefix
		{"W[0,10] w x1, w x2 · R[0,10] r x1", false, false},                                                          // G1b
		{"W[0,10] w x1, r x null", false, false},                                                                     // internal
		{"X[0,100] w x1, w z6 · P[10,20] r x1 (session c) · T[22,30] w z5 (session c) · Q[40,50] r z6", true, false}, // S (Δ=0)
	} {
		h, err := history.ParseCompact(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := bruteValid(project(h.Txns, h.Txns, false), false); got != tc.ser {
			t.Errorf("%s: serializable = %v, want %v", tc.text, got, tc.ser)
		}
		if got := bruteValid(project(h.Txns, h.Txns, true), true); got != tc.strict {
			t.Errorf("%s: strict = %v, want %v", tc.text, got, tc.strict)
		}
	}
	// History J's false core: {A, C, R} keeps R's read only if B is
	// ignored; the projection drops it.
	h, _ := history.ParseCompact("A[0,10] w x5 · C[20,30] w x6 · B[40,50] w x5 · R[60,70] r x5")
	core := []history.Txn{h.Txns[0], h.Txns[1], h.Txns[3]}
	if !bruteValid(project(core, h.Txns, true), true) {
		t.Error("J: {A, C, R} projected must be valid")
	}
}

package oracle

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// siLevels are the checked levels of the snapshot-isolation family.
func siLevels() []history.Level {
	var out []history.Level
	for _, l := range history.Levels() {
		if l.Level.BeginCommit() {
			out = append(out, l.Level)
		}
	}
	return out
}

// naiveSIValid is the family's definition with no cleverness: for every
// subset of the unknown transactions and every sequence of begin and
// commit events (each begin before its commit), ask replaySIWitness,
// which shares no code with checkSI's search.
func naiveSIValid(h *history.History, opts history.Options) bool {
	var committed, unknown []string
	for i := range h.Txns {
		switch h.Txns[i].Status {
		case history.Committed:
			committed = append(committed, h.Txns[i].ID)
		case history.Unknown:
			unknown = append(unknown, h.Txns[i].ID)
		}
	}
	for m := 0; m < 1<<len(unknown); m++ {
		ids := slices.Clone(committed)
		for j, id := range unknown {
			if m&(1<<j) != 0 {
				ids = append(ids, id)
			}
		}
		begun := make([]bool, len(ids))
		done := make([]bool, len(ids))
		var seq []string
		var walk func() bool
		walk = func() bool {
			if len(seq) == 2*len(ids) {
				return replaySIWitness(h, opts, seq) == nil
			}
			for i, id := range ids {
				switch {
				case !begun[i]:
					begun[i] = true
					seq = append(seq, "begin "+id)
					ok := walk()
					seq = seq[:len(seq)-1]
					begun[i] = false
					if ok {
						return true
					}
				case !done[i]:
					done[i] = true
					seq = append(seq, "commit "+id)
					ok := walk()
					seq = seq[:len(seq)-1]
					done[i] = false
					if ok {
						return true
					}
				}
			}
			return false
		}
		if walk() {
			return true
		}
	}
	return false
}

// TestSIAgreesWithNaiveEnumeration is the oracle's own oracle for the
// family: checkSI's memoized search gives the verdict of plain
// enumeration of event sequences, and its witness replays. Histories of
// up to four transactions (8! sequences), every SI level, Δ, in-doubt
// horizon and initial state.
func TestSIAgreesWithNaiveEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	counts := map[bool]int{}
	levels := siLevels()
	for range tinyCount(t, 1500) {
		cfg := randomTinyConfig(rng)
		cfg.MaxTxns = 4
		h := RandomTiny(rng, cfg)
		opts := randomOptions(rng)
		opts.Level = levels[rng.IntN(len(levels))]
		valid, witness, err := Check(h, opts)
		if err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
		counts[valid]++
		if want := naiveSIValid(h, opts); valid != want {
			t.Fatalf("%s Δ=%d indoubt=%d initial=%s: Check says valid=%v, enumeration %v\n%s",
				opts.Level, opts.Skew, opts.InDoubt, opts.InitialState, valid, want, compactOf(h))
		}
		if valid {
			if err := ReplayWitness(h, opts, witness); err != nil {
				t.Fatalf("witness %v does not replay: %v\n%s", witness, err, compactOf(h))
			}
		}
	}
	t.Logf("valid %d, invalid %d", counts[true], counts[false])
	if counts[true] == 0 || counts[false] == 0 {
		t.Errorf("the mix is one-sided: %v", counts)
	}
}

// TestSIHistories: the family's named histories (docs/SEMANTICS.md §1),
// each with its verdict at every SI level and at serializable. The
// pairs of levels they separate are the lattice's strict inclusions.
func TestSIHistories(t *testing.T) {
	const (
		si  = history.SnapshotIsolation
		ss  = history.StrongSessionSnapshotIsolation
		gsi = history.GeneralizedSnapshotIsolation
		ssi = history.StrongSnapshotIsolation
		ser = history.Serializable
	)
	for _, c := range []struct {
		name  string
		text  string
		skew  int64
		valid []history.Level // every other level checked is invalid
	}{
		// History S: a transaction that reads from one inside its client
		// interval; the database took its snapshot late.
		{"S", "L[0,100] r x1 · W[10,20] w x1", 0, []history.Level{si, ss, gsi, ssi, ser}},
		{"write skew", "A[0,10] r x null, r y null, w x1 · B[0,10] r x null, r y null, w y1", 0, []history.Level{si, ss, gsi, ssi}},
		{"lost update", "A[0,10] r x0, w x1 · B[0,10] r x0, w x2 · I[-20,-10] w x0", 0, nil},
		{"read skew", "W[0,10] w x1, w y1 · R[0,10] r x1, r y null", 0, nil},
		{"long fork", "A[0,10] w x1 · B[0,10] w y1 · C[0,10] r x1, r y null · D[0,10] r x null, r y1", 0, nil},
		{"non-repeatable read", "W[0,10] w x1 · R[0,10] r x null, r x1", 0, nil},
		// A stale read across sessions: GSI lets the snapshot be old,
		// strong SI does not.
		{"stale read", "W[0,10] w x1 · R[20,30] r x null", 0, []history.Level{si, ss, gsi, ser}},
		// A stale read in one session whose intervals overlap after
		// widening: only session order forbids it.
		{"session stale read", "W[0,10] w x1 (session c) · R[12,20] r x null (session c)", 5, []history.Level{si, gsi, ser}},
		// A writer that read an old version must commit before the
		// real-time later overwrite: GSI forbids it, session levels see
		// no order.
		{"GSI commit order", "W1[0,10] w x1 · W2[20,30] w x2 · R[40,50] r x1, w x3", 0, []history.Level{si, ss, ser}},
	} {
		h, err := history.ParseCompact(c.text)
		if err != nil {
			t.Fatal(err)
		}
		for _, lv := range append(siLevels(), ser) {
			opts := history.DefaultOptions()
			opts.Level, opts.Skew = lv, c.skew
			got, _, err := Check(h, opts)
			if err != nil {
				t.Fatalf("%s at %s: %v", c.name, lv, err)
			}
			if want := slices.Contains(c.valid, lv); got != want {
				t.Errorf("%s at %s: valid=%v, want %v", c.name, lv, got, want)
			}
		}
	}
}

// TestSIReplayRejectsTampering: the witness checker refuses overlapping
// writers, a begin before a session predecessor's commit and a read the
// snapshot does not hold.
func TestSIReplayRejectsTampering(t *testing.T) {
	h, err := history.ParseCompact("A r x0, w x1 (session c) · B r x0, w x2 (session d) · I w x0 (session e)")
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.SnapshotIsolation
	for _, events := range [][]string{
		{"begin I", "commit I", "begin A", "begin B", "commit A", "commit B"},
		{"begin I", "commit I", "begin A", "commit A", "begin B", "commit B"},
		{"begin I", "begin A", "commit I", "commit A", "begin B", "commit B"},
		{"begin I", "commit I", "begin A", "commit A"},
	} {
		if err := ReplayWitness(h, opts, events); err == nil {
			t.Errorf("%v replays", events)
		}
	}
}

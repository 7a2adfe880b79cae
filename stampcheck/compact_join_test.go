package stampcheck_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// viaSplit is the compact path through ingest.ScanNativeSplit in parts
// parts: each part into its own form (Part), refusing as the scan goes,
// then joined in input order (Join) with the split's Remap, and checked.
// It also fills the one-pass form (AddIDs over ScanNative, with the same
// id seed) and fails t when the joined form differs from it while neither
// refused (stampcheck.CompactDiff): the join is exact where it is used.
func viaSplit(t *testing.T, text []byte, opts history.Options, parts int) (*incremental.Result, string) {
	t.Helper()
	first := stampcheck.NewCompact(0)
	require(first, opts)
	one := stampcheck.SameSeed(first) // hashes comparable
	if err := ingest.ScanNative(bytes.NewReader(text), "t", func(e *ingest.Event) error {
		one.AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
		return nil
	}); err != nil {
		one = nil
	}
	forms := make([]*stampcheck.Compact, parts)
	for k := range forms {
		forms[k] = first.Part(0)
	}
	forms[0] = first
	refused := errors.New("refused")
	s, err := ingest.ScanNativeSplit(bytes.NewReader(text), int64(len(text)), "t", parts, func(k int, e *ingest.Event) error {
		forms[k].AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
		if forms[k].Why() != "" {
			return refused
		}
		return nil
	})
	if err != nil {
		return nil, err.Error()
	}
	for k := 1; k < s.Parts(); k++ {
		first.Join(forms[k], s.Remap(k))
	}
	if one != nil && one.Why() == "" && first.Why() == "" {
		if d := stampcheck.CompactDiff(first, one); d != "" {
			t.Fatalf("joined form (%d parts) differs from one pass: %s\n%s", s.Parts(), d, text)
		}
	}
	return compactCheck(first, opts)
}

// TestCompactSplit holds the split compact path to the one-pass one on
// the oracle's tiny stamped histories and generated ones with mutations
// (TestCompactAgainstFull's sources), in 2 to 4 parts at each level: the
// same result (witness included) whenever one pass gives one, and the
// same joined form (viaSplit). A refusal may come from another part
// than one pass's first (Join's doc), so only results are compared.
func TestCompactSplit(t *testing.T) {
	n := compactCases(t) / 3 // each case is two scans and a join more

	levels := append([]history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable}, snapshotLevels...)
	for _, lv := range levels {
		t.Run(lv.String(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(lv)+29, 92))
			var witnessed int
			for i := 0; i < n; i++ {
				h := compactCase(t, rng, i)
				opts := tinyOpts(rng, lv)
				text := ingest.AppendNativeHistory(nil, h)
				want, wantWhy := viaScan(text, opts)
				got, why := viaSplit(t, text, opts, 2+rng.IntN(3))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("split: %v (%s), one pass %v (%s)\n%s", got, why, want, wantWhy, text)
				}
				if want != nil {
					witnessed++
				}
			}
			if n >= 100 && witnessed == 0 {
				t.Fatal("no history witnessed: the comparison is empty")
			}
		})
	}
}

// TestCompactSplitRegressions: histories whose second part, numbered on
// its own, reads like the first part's values, keys or sessions: a join
// without Remap's values, without the dense keys' or the sessions'
// mapping, says valid where one pass finds the read unreproduced or the
// session order broken (a missed anomaly).
func TestCompactSplitRegressions(t *testing.T) {
	for _, c := range []struct {
		name string
		lv   history.Level
		text string
	}{
		// Part 1 numbers "b" 2, as part 0 numbered "a".
		{"values", history.Serializable, `{"id":"t1","status":"committed","commit_ts":1,"ops":[["w","x","a"]]}` + "\n" +
			`{"id":"t2","status":"committed","commit_ts":2,"ops":[["r","x","b"]]}` + "\n"},
		// Part 1 meets y first: its dense key 0 is part 0's x.
		{"keys", history.Serializable, `{"id":"t1","status":"committed","commit_ts":1,"ops":[["w","x",1],["w","y",2]]}` + "\n" +
			`{"id":"t2","status":"committed","commit_ts":2,"ops":[["r","y",1]]}` + "\n"},
		// Part 1 (t3, from two parts on) meets session b first: alone,
		// its session 0, which is part 0's a; t3 then follows t1 in a,
		// where one pass has it after t2 in b, against the stamps.
		{"sessions", history.StrongSessionSerializable, `{"id":"t1","session":"a","status":"committed","commit_ts":1,"ops":[["w","x",1]]}` + "\n" +
			`{"id":"t2","session":"b","status":"committed","commit_ts":3,"ops":[["w","y",1]]}` + "\n" +
			`{"id":"t3","session":"b","status":"committed","commit_ts":2,"ops":[["w","z",1]]}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := []byte(c.text)
			opts := history.Options{Level: c.lv}
			if want, why := viaScan(text, opts); want != nil {
				t.Fatalf("one pass witnesses it (%s): not a regression", why)
			}
			for parts := 2; parts <= 3; parts++ {
				if got, why := viaSplit(t, text, opts, parts); got != nil {
					t.Fatalf("%d parts: joined form witnesses it (%s)", parts, why)
				}
			}
		})
	}
}

// TestCompactPartMisplaced: a Part whose first line's position is not
// after its first form's lines (filled from a scan of its own, lines from
// 1) is stored over the first form's room; Join refuses it rather than
// read a transaction overwritten.
func TestCompactPartMisplaced(t *testing.T) {
	text := []byte(`{"id":"t1","status":"committed","commit_ts":1,"ops":[["w","x",1]]}` + "\n" +
		`{"id":"t2","status":"committed","commit_ts":2,"ops":[["r","x",1]]}` + "\n")
	first := stampcheck.NewCompact(8)
	p := first.Part(8)
	for _, c := range []*stampcheck.Compact{first, p} {
		if err := ingest.ScanNative(bytes.NewReader(text), "t", func(e *ingest.Event) error {
			c.AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	first.Join(p, []int32{0, 1, 2})
	if first.Why() == "" {
		t.Fatal("a part stored over its first form's transactions was joined")
	}
}

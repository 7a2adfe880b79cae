package oracle

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestPLHistories: the textbook histories at repeatable-read and pl-2+,
// against what Adya's definitions say of them (thesis §4.1-§4.2): a lost
// update and a read skew are G-single (forbidden at both), a write skew
// and a long fork have two anti-dependencies (PL-2+ allows them, PL-2.99
// does not), a fractured read is G-single too.
func TestPLHistories(t *testing.T) {
	const (
		rr = history.RepeatableRead
		pl = history.PL2Plus
		rc = history.ReadCommitted
	)
	for _, c := range []struct {
		name  string
		text  string
		valid []history.Level // of rr, pl, rc
	}{
		{"serial", "A w x1 · B r x1, w x2 · C r x2", []history.Level{rr, pl, rc}},
		{"lost update", "A r x0, w x1 · B r x0, w x2 · I w x0", []history.Level{rc}},
		{"read skew", "W w x1, w y1 · R r x1, r y null", []history.Level{rc}},
		{"write skew", "A r x null, r y null, w x1 · B r x null, r y null, w y1", []history.Level{pl, rc}},
		{"long fork", "A w x1 · B w y1 · C r x1, r y null · D r x null, r y1", []history.Level{pl, rc}},
		{"non-repeatable read", "W w x1 · R r x null, r x1", []history.Level{rc}},
		// Two writers of x and y; R sees A's y and B's x. The version
		// orders are free (no read shows them), so no G0 is forced; but
		// whichever order x takes, R's read of the other key closes a
		// cycle with one rw edge.
		{"crossed writers", "A w x1, w y2 · B w x2, w y1 · R r x2, r y2", []history.Level{rc}},
		// rw edges C -> A and D -> B, wr B -> A and C -> D: no cycle at
		// all (C D B A is a serial order).
		{"rw without a cycle", "B w y1 · A r y1, w x1 · C r x null, w z1 · D r z1, r y null", []history.Level{rr, pl, rc}},
		// G-single through a path of two wr edges: A -wr-> B -wr-> C and
		// C -rw-> A (C read the initial y that A overwrote).
		{"G-single via a path", "A w x1, w y1 · B r x1, w z1 · C r z1, r y null", []history.Level{rc}},
	} {
		h, err := history.ParseCompact(c.text)
		if err != nil {
			t.Fatal(err)
		}
		for _, lv := range []history.Level{rr, pl, rc} {
			opts := history.DefaultOptions()
			opts.Level = lv
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

// TestRepeatableReadIsSerializableOnItems: on register histories (no
// predicate reads) Adya's PL-2.99, enumerated here over version orders
// and the direct serialization graph, accepts exactly the histories the
// serial-replay oracle accepts at serializable: two definitions that share
// no code, so a slip in either shows. Also the lattice's other claim about
// the pair: pl-2+ accepts every repeatable-read history.
func TestRepeatableReadIsSerializableOnItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 299))
	cfg := DefaultTinyConfig()
	cfg.Lists = false
	n := tinyCount(t, 2000)
	var valid, invalid, apart int
	for i := range n {
		cfg.InitialValues = i%2 == 1
		h := RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		opts := history.DefaultOptions()
		if i%2 == 1 {
			opts.InitialState = history.InitialUnknown
		}
		verdict := map[history.Level]bool{}
		for _, lv := range []history.Level{history.Serializable, history.RepeatableRead, history.PL2Plus} {
			opts.Level = lv
			ok, _, err := Check(h, opts)
			if err != nil {
				t.Fatalf("history %d at %s: %v", i, lv, err)
			}
			verdict[lv] = ok
		}
		if verdict[history.Serializable] != verdict[history.RepeatableRead] {
			for _, tx := range h.Txns {
				t.Log(tx.Compact())
			}
			t.Fatalf("history %d: serializable=%v, repeatable-read=%v", i, verdict[history.Serializable], verdict[history.RepeatableRead])
		}
		if verdict[history.RepeatableRead] && !verdict[history.PL2Plus] {
			t.Fatalf("history %d: repeatable-read but not pl-2+", i)
		}
		if verdict[history.PL2Plus] && !verdict[history.RepeatableRead] {
			apart++
		}
		if verdict[history.Serializable] {
			valid++
		} else {
			invalid++
		}
	}
	if valid == 0 || invalid == 0 || (apart == 0 && !testing.Short()) {
		t.Errorf("uninformative sample: %d valid, %d invalid, %d pl-2+ only", valid, invalid, apart)
	}
	t.Logf("%d valid, %d invalid, %d valid at pl-2+ only", valid, invalid, apart)
}

package sionline

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// The sweep with begins apart from commits (docs/SEMANTICS.md §5 "Begin
// and commit apart: a begin in the past"). Every order it returns must
// be a completion the oracle's replay accepts at strong snapshot
// isolation; the table's histories break the naive versions of the rule
// (a begin in the past that ignores a concurrent writer of the same key,
// a real-time predecessor or a session predecessor committed after it),
// and the allowed anomalies of SI that no serial order has (write skew,
// a long reader beside a blind writer) are what it now settles.

// rt is a transaction of the table: id, session, [start, end], ops in
// the text form "r x 1", "w x 1", "a l 1", "rl l 1,2" (a list read), "r x
// null".
func rt(id, session string, start, end int64, ops ...string) history.Txn {
	t := history.Txn{ID: id, Session: session, HasSession: session != "", Start: start, End: end, HasTime: true, Status: history.Committed}
	for _, o := range ops {
		f := strings.Fields(o)
		op := history.Op{Key: history.Key(f[1])}
		switch f[0] {
		case "r":
			op.Kind, op.Value = history.Read, history.Value(f[2])
			if f[2] == "null" {
				op.Value = history.Null
			}
		case "w":
			op.Kind, op.Value = history.Write, history.Value(f[2])
		case "a":
			op.Kind, op.Value = history.Append, history.Value(f[2])
		case "rl":
			op.Kind, op.IsList = history.Read, true
			if len(f) > 2 {
				for _, v := range strings.Split(f[2], ",") {
					op.List = append(op.List, history.Value(v))
				}
			}
		}
		t.Ops = append(t.Ops, op)
	}
	return t
}

func TestPastBeginTable(t *testing.T) {
	for _, c := range []struct {
		name   string
		txns   []history.Txn
		valid  bool // at strong snapshot isolation, by the oracle
		serial bool // the serial sweep (NoPastBegin) orders it
		past   bool // the sweep with begins in the past orders it
		// unknown: under an unknown initial state (else the empty one)
		unknown bool
	}{
		{
			// R reads x before W's commit and writes z; T, after W
			// in real time, reads x new and z old: valid at SI
			// (B_R < C_W < B_T < C_T < C_R), no serial order.
			name: "long reader beside a blind writer",
			txns: []history.Txn{
				rt("R", "s1", 0, 100, "r x null", "w z 1"),
				rt("W", "s2", 10, 20, "w x 1"),
				rt("T", "s3", 30, 40, "r x 1", "r z null"),
			},
			valid: true, past: true,
		},
		{
			// Write skew: allowed at SI, not serializable.
			name: "write skew",
			txns: []history.Txn{
				rt("A", "s1", 0, 100, "r x null", "r y null", "w x 1"),
				rt("B", "s2", 10, 90, "r x null", "r y null", "w y 1"),
				rt("C", "s3", 200, 210, "r x 1", "r y 1"),
			},
			valid: true, past: true,
		},
		{
			// The same with lists: A appends to l after reading m
			// empty, B to m after reading l empty.
			name: "write skew on lists",
			txns: []history.Txn{
				rt("A", "s1", 0, 100, "rl m", "a l 1"),
				rt("B", "s2", 10, 90, "rl l", "a m 1"),
				rt("C", "s3", 200, 210, "rl l 1", "rl m 1"),
			},
			valid: true, past: true,
		},
		{
			// Lost update: A and B both read x empty and write it.
			// A naive begin in the past (no check of a concurrent
			// writer of the key) puts A's begin before B's commit.
			name: "lost update",
			txns: []history.Txn{
				rt("A", "s1", 0, 100, "r x null", "w x 1"),
				rt("B", "s2", 10, 20, "r x null", "w x 2"),
				rt("C", "s3", 200, 210, "r x 1"),
			},
		},
		{
			// The same on a list: both read it empty and append.
			name: "lost append",
			txns: []history.Txn{
				rt("A", "s1", 0, 100, "rl l", "a l 1"),
				rt("B", "s2", 10, 20, "rl l", "a l 2"),
				rt("C", "s3", 200, 210, "rl l 2,1"),
			},
		},
		{
			// P precedes R in real time, so R's snapshot holds P's
			// x; a begin in the past before P's commit is against
			// strong SI's real time.
			name: "stale read after a real-time predecessor",
			txns: []history.Txn{
				rt("P", "s1", 0, 10, "w x 1"),
				rt("R", "s2", 20, 100, "r x null", "w y 1"),
				rt("Q", "s3", 30, 40, "r x 1", "r y null"),
			},
		},
		{
			// P is before R in R's session, their client times
			// overlapping (P's client saw its commit late): R must
			// begin after P commits.
			name: "stale read after a session predecessor",
			txns: []history.Txn{
				rt("P", "s1", 0, 50, "w x 1"),
				rt("R", "s1", 40, 100, "r x null", "w y 1"),
				rt("Q", "s3", 20, 30, "r y null"),
			},
		},
		{
			// Long fork: T3 and T4 see T1 and T2 in opposite orders;
			// no snapshot per transaction explains both.
			name: "long fork",
			txns: []history.Txn{
				rt("T1", "s1", 0, 100, "w x 1"),
				rt("T2", "s2", 0, 100, "w y 1"),
				rt("T3", "s3", 0, 100, "r x 1", "r y null"),
				rt("T4", "s4", 0, 100, "r x null", "r y 1"),
			},
		},
		{
			// A read skew that a begin in the past cannot repair: R
			// reads x before W and y after it.
			name: "read skew",
			txns: []history.Txn{
				rt("W", "s1", 10, 20, "w x 1", "w y 1"),
				rt("R", "s2", 0, 100, "r x null", "r y 1"),
			},
		},
		{
			// Under an unknown initial state, R and U each read x's
			// initial value at a begin in the past, 5 and 6: only one
			// initial value exists. A begin in the past that does not
			// fix the initial value its read takes lets both through.
			name: "two initial values read in the past",
			txns: []history.Txn{
				rt("R", "s1", 0, 100, "r x 5", "w z 1"),
				rt("U", "s2", 0, 100, "r x 6", "w q 1"),
				rt("W", "s3", 10, 20, "w x 1", "w y 1"),
				rt("T", "s4", 30, 40, "r y 1", "r z null"),
				rt("V", "s5", 30, 40, "r y 1", "r q null"),
			},
			unknown: true,
		},
		{
			// The same with one initial value: valid.
			name: "one initial value read in the past",
			txns: []history.Txn{
				rt("R", "s1", 0, 100, "r x 5", "w z 1"),
				rt("U", "s2", 0, 100, "r x 5", "w q 1"),
				rt("W", "s3", 10, 20, "w x 1", "w y 1"),
				rt("T", "s4", 30, 40, "r y 1", "r z null"),
				rt("V", "s5", 30, 40, "r y 1", "r q null"),
			},
			unknown: true, valid: true, past: true,
		},
		{
			// The list form: R reads l as [5] and U as [6] before W's
			// append, so the initial list would be both.
			name: "two initial lists read in the past",
			txns: []history.Txn{
				rt("R", "s1", 0, 100, "rl l 5", "w z 1"),
				rt("U", "s2", 0, 100, "rl l 6", "w q 1"),
				rt("W", "s3", 10, 20, "a l 1", "w y 1"),
				rt("T", "s4", 30, 40, "r y 1", "r z null"),
				rt("V", "s5", 30, 40, "r y 1", "r q null"),
			},
			unknown: true,
		},
		{
			// Serializable: the serial sweep orders it, and the sweep
			// with begins in the past orders it the same way.
			name: "serial",
			txns: []history.Txn{
				rt("A", "s1", 0, 10, "w x 1"),
				rt("B", "s2", 20, 30, "r x 1", "w x 2"),
			},
			valid: true, serial: true, past: true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &history.History{Txns: c.txns}
			opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 3, InitialState: history.InitialEmpty}
			if c.unknown {
				opts.InitialState = history.InitialUnknown
			}
			ok, _, err := oracle.Check(h, opts)
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.valid {
				t.Fatalf("the oracle says valid=%v, the table %v", ok, c.valid)
			}
			e, err := New(opts, Config{})
			if err != nil {
				t.Fatal(err)
			}
			for _, off := range []bool{true, false} {
				func() {
					defer func(p bool) { NoPastBegin = p }(NoPastBegin)
					NoPastBegin = off
					w := e.serialWitness(h, nil)
					if w != nil {
						if err := oracle.ReplayWitness(h, opts, w); err != nil {
							t.Fatalf("NoPastBegin=%v: the sweep's order %v: %v", off, w, err)
						}
					}
					want := c.past
					if off {
						want = c.serial
					}
					if (w != nil) != want {
						t.Fatalf("NoPastBegin=%v: the sweep ordered it: %v, want %v (%v)", off, w != nil, want, w)
					}
				}()
			}
		})
	}
}

// overlapping is a tiny history whose client intervals overlap a lot:
// 2-5 transactions over 2-4 sessions, two registers and a list, so that
// begins in the past are often needed and often wrong.
func overlapping(rng *rand.Rand) *history.History {
	h := &history.History{}
	n := 2 + rng.IntN(4)
	sessions := 2 + rng.IntN(3)
	at := make([]int64, sessions)
	next := 1
	for i := 0; i < n; i++ {
		s := rng.IntN(sessions)
		start := at[s] + rng.Int64N(6)
		end := start + 1 + rng.Int64N(20)
		at[s] = end - rng.Int64N(3) // a session's next may start before its predecessor's end
		t := history.Txn{ID: "t" + strconv.Itoa(i), Session: "s" + strconv.Itoa(s), HasSession: true,
			Start: start, End: end, HasTime: true, Status: history.Committed}
		switch rng.IntN(12) {
		case 0:
			t.Status = history.Aborted
		case 1:
			t.Status = history.Unknown
		}
		for k := 0; k < 1+rng.IntN(3); k++ {
			switch rng.IntN(5) {
			case 0, 1:
				key := history.Key("k" + strconv.Itoa(rng.IntN(2)))
				v := history.Null
				if x := rng.IntN(4); x > 0 {
					v = history.Value(strconv.Itoa(x))
				}
				t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: key, Value: v})
			case 2, 3:
				key := history.Key("k" + strconv.Itoa(rng.IntN(2)))
				t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: key, Value: history.Value(strconv.Itoa(1 + rng.IntN(3)))})
			default:
				if rng.IntN(2) == 0 {
					t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: "l", Value: history.Value(strconv.Itoa(next))})
					next++
				} else {
					l := []history.Value{}
					for v := 1; v < 1+rng.IntN(next); v++ {
						l = append(l, history.Value(strconv.Itoa(v)))
					}
					if len(l) > 1 && rng.IntN(4) == 0 {
						l[0], l[1] = l[1], l[0]
					}
					t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: "l", IsList: true, List: l})
				}
			}
		}
		h.Txns = append(h.Txns, t)
	}
	slices.SortStableFunc(h.Txns, func(a, b history.Txn) int { return int(a.Start - b.Start) })
	return h
}

// TestPastBeginAgainstOracle holds the sweep with begins in the past to
// the brute-force oracle on tiny overlapping histories, under the empty
// and an unknown initial state, Δ 0 and 1, with and without a ghost:
// every order it returns is replayed by the oracle, it orders nothing
// the oracle finds invalid, and it orders some valid histories the
// serial sweep cannot (or the rule would be dead).
func TestPastBeginAgainstOracle(t *testing.T) {
	for _, init := range []history.InitialState{history.InitialEmpty, history.InitialUnknown} {
		count := 4000
		if testing.Short() {
			count = 800
		}
		found, valid, onlyPast, invalidSerial := 0, 0, 0, 0
		for i := 0; i < count; i++ {
			rng := rand.New(rand.NewPCG(uint64(i), 2832+uint64(init)))
			h := overlapping(rng)
			opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 3, Skew: rng.Int64N(2), InitialState: init}
			var g *ghost
			if rng.IntN(4) == 0 {
				g = &ghost{Reg: map[history.Key]history.Value{"k0": "1"}, List: map[history.Key][]history.Value{"l": {"0"}}, Pin: map[history.Key]history.Op{}, Time: h.Txns[0].Start}
				if init == history.InitialUnknown && rng.IntN(2) == 0 {
					delete(g.Reg, "k0")
					delete(g.List, "l")
					g.Pin["k1"] = history.Op{Kind: history.Read, Key: "k1", Value: history.Value(strconv.Itoa(rng.IntN(3)))}
					g.Pin["l"] = history.Op{Kind: history.Read, Key: "l", IsList: true, List: []history.Value{"1"}[:rng.IntN(2)]}
				}
				h.Txns = append(h.Txns, g.txn(nil))
			}
			e, err := New(opts, Config{})
			if err != nil {
				t.Fatal(err)
			}
			ok, _, err := oracle.Check(h, opts)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				valid++
			}
			w := e.serialWitness(h, g)
			NoPastBegin = true
			ws := e.serialWitness(h, g)
			NoPastBegin = false
			if ws != nil && !ok {
				invalidSerial++
			}
			if w == nil {
				continue
			}
			found++
			if ws == nil {
				onlyPast++
			}
			if err := oracle.ReplayWitness(h, opts, w); err != nil {
				t.Fatalf("init %v history %d (Δ=%d): the sweep's order %v: %v\n%s", init, i, opts.Skew, w, err, dump(h))
			}
			if !ok {
				t.Fatalf("init %v history %d: the sweep ordered a history the oracle finds invalid: %v\n%s", init, i, w, dump(h))
			}
		}
		t.Logf("init %v: %d histories, %d valid, %d ordered by the sweep, %d of them only with begins in the past", init, count, valid, found, onlyPast)
		if invalidSerial > 0 {
			t.Errorf("the serial sweep ordered %d invalid histories", invalidSerial)
		}
		if valid < count/10 || found < valid/3 || onlyPast == 0 {
			t.Errorf("%d valid of %d, %d ordered, %d only with begins in the past: the test would say nothing", valid, count, found, onlyPast)
		}
	}
}

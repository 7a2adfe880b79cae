package record

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
)

// TestSessionsConcurrent: concurrent sessions get ids <session>-1..n in
// start order, disjoint intervals within a session (R2, R3), and every
// transaction is emitted once (R1).
func TestSessionsConcurrent(t *testing.T) {
	var sink SliceSink
	rec := New(&sink, Options{})
	const sessions, per = 8, 200
	var wg sync.WaitGroup
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				tx := rec.Begin(fmt.Sprintf("s%d", s))
				tx.Write(s, i)
				var err error
				switch i % 3 {
				case 0:
					err = tx.Commit()
				case 1:
					err = tx.Abort()
				default:
					err = tx.Unknown()
				}
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	h := sink.History()
	if len(h.Txns) != sessions*per {
		t.Fatalf("%d transactions emitted, want %d", len(h.Txns), sessions*per)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	bySession := map[string][]history.Txn{}
	for _, tx := range h.Txns {
		bySession[tx.Session] = append(bySession[tx.Session], tx)
	}
	for s, txns := range bySession {
		sort.Slice(txns, func(i, j int) bool { return txns[i].Start < txns[j].Start })
		for i, tx := range txns {
			if want := fmt.Sprintf("%s-%d", s, i+1); tx.ID != want {
				t.Fatalf("session %s: transaction %d in start order is %s, want %s", s, i, tx.ID, want)
			}
			if want := []history.Op{{Kind: history.Write, Key: history.IntValue(int64(s[1] - '0')), Value: history.IntValue(int64(i))}}; !reflect.DeepEqual(tx.Ops, want) {
				t.Fatalf("%s ops %v, want %v", tx.ID, tx.Ops, want)
			}
			if want := history.Status(i % 3); tx.Status != want {
				t.Fatalf("%s status %v, want %v", tx.ID, tx.Status, want)
			}
			if !tx.HasTime || !tx.HasSession || tx.End < tx.Start {
				t.Fatalf("%s: bad header %+v", tx.ID, tx)
			}
			if i > 0 && txns[i-1].End > tx.Start {
				t.Fatalf("session %s: %s ended at %d after %s began at %d", s, txns[i-1].ID, txns[i-1].End, tx.ID, tx.Start)
			}
		}
	}
}

func TestFinishOnce(t *testing.T) {
	n := 0
	rec := New(SinkFunc(func(*history.Txn) error { n++; return nil }), Options{})
	tx := rec.Begin("a")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, end := range []func() error{tx.Commit, tx.Abort, tx.Unknown} {
		if err := end(); err != ErrDone {
			t.Fatalf("second end: %v, want ErrDone", err)
		}
	}
	if n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
}

func TestSinkErrorReturned(t *testing.T) {
	want := fmt.Errorf("disk full")
	rec := New(SinkFunc(func(*history.Txn) error { return want }), Options{})
	if err := rec.Begin("a").Commit(); err != want {
		t.Fatalf("got %v, want the sink's error", err)
	}
}

func TestClock(t *testing.T) {
	now := int64(100)
	rec := New(&SliceSink{}, Options{Clock: func() int64 { now -= 10; return now }})
	var sink SliceSink
	rec.sink = &sink
	tx := rec.Begin("a")
	tx.Commit()
	got := sink.History().Txns[0]
	// A clock that goes back must not produce end < start.
	if got.Start != 90 || got.End != 90 {
		t.Fatalf("start %d end %d, want 90 90", got.Start, got.End)
	}
}

func TestValue(t *testing.T) {
	s := "x"
	i := int64(-3)
	for _, c := range []struct {
		in   any
		want history.Value
	}{
		{nil, history.Null},
		{10, "10"},
		{int8(-8), "-8"},
		{int32(math.MinInt32), "-2147483648"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{uint64(math.MaxInt64), "9223372036854775807"},
		{uint8(255), "255"},
		{"10", `"10"`},
		{"a\"b\\\n", `"a\"b\\\n"`},
		{"é", `"é"`},
		{sql.NullInt64{}, history.Null},
		{sql.NullInt64{Int64: 7, Valid: true}, "7"},
		{sql.NullInt32{Int32: 7, Valid: true}, "7"},
		{sql.NullString{String: "7", Valid: true}, `"7"`},
		{sql.NullString{}, history.Null},
		{(*int64)(nil), history.Null},
		{&i, "-3"},
		{&s, `"x"`},
	} {
		got, err := Value(c.in)
		if err != nil || got != c.want {
			t.Errorf("Value(%#v) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []any{uint64(math.MaxInt64) + 1, 1.5, true, []byte("x"), struct{}{}} {
		if _, err := Value(bad); err == nil {
			t.Errorf("Value(%#v) accepted", bad)
		}
	}
}

func TestMisusePanics(t *testing.T) {
	rec := New(&SliceSink{}, Options{})
	ended := rec.Begin("a")
	ended.Commit()
	for name, f := range map[string]func(){
		"empty session":   func() { rec.Begin("") },
		"nil write":       func() { rec.Begin("a").Write(1, nil) },
		"nil append":      func() { rec.Begin("a").Append(1, nil) },
		"nil key":         func() { rec.Begin("a").Read(nil, 1) },
		"float value":     func() { rec.Begin("a").Read(1, 1.5) },
		"nil list elem":   func() { rec.Begin("a").ReadList(1, []any{1, nil}) },
		"bad list":        func() { rec.Begin("a").ReadList(1, []float64{1}) },
		"op after end":    func() { ended.Read(1, 1) },
		"status too high": func() { rec.Begin("a").Finish(history.Unknown + 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// randomTxn records a random transaction: mixed key and value types,
// strings that need escaping, list reads (nil, empty, mixed types).
func randomTxn(rng *rand.Rand, tx *Tx) history.Status {
	strs := []string{"", "a", "10", "é", "\"q\"", "back\\slash", "tab\t", "\x01", "\u2028"}
	val := func() any {
		switch rng.IntN(3) {
		case 0:
			return rng.Int64N(1<<62) - 1<<61
		case 1:
			return strs[rng.IntN(len(strs))]
		}
		return rng.IntN(5)
	}
	key := func() any {
		if rng.IntN(2) == 0 {
			return rng.IntN(4)
		}
		return strs[1+rng.IntN(len(strs)-1)] + "k"
	}
	for n := rng.IntN(5); n > 0; n-- {
		switch rng.IntN(5) {
		case 0:
			if rng.IntN(4) == 0 {
				tx.Read(key(), nil)
			} else {
				tx.Read(key(), val())
			}
		case 1:
			tx.Write(key(), val())
		case 2:
			tx.Append("L"+fmt.Sprint(rng.IntN(3)), val())
		case 3:
			var l []any
			for m := rng.IntN(4); m > 0; m-- {
				l = append(l, val())
			}
			tx.ReadList("L"+fmt.Sprint(rng.IntN(3)), l)
		default:
			tx.ReadList("L"+fmt.Sprint(rng.IntN(3)), []int64{})
		}
	}
	return history.Status(rng.IntN(3))
}

// TestFileRoundTrip: transactions recorded concurrently into a JSON Lines
// file read back with ingest.ReadFile equal, field by field, the ones a
// SliceSink kept without any encoding (the oracle).
func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	file, err := CreateJSONLines(path)
	if err != nil {
		t.Fatal(err)
	}
	var mem SliceSink
	rec := New(MultiSink(&mem, file), Options{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := 0; i < 300; i++ {
				tx := rec.Begin(fmt.Sprintf("g%d", g))
				if err := tx.Finish(randomTxn(rng, tx)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	h, _, err := ingest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := mem.History()
	if len(h.Txns) != len(want.Txns) {
		t.Fatalf("file has %d transactions, memory %d", len(h.Txns), len(want.Txns))
	}
	byID := map[string]history.Txn{}
	for _, tx := range want.Txns {
		byID[tx.ID] = tx
	}
	for _, got := range h.Txns {
		w, ok := byID[got.ID]
		if !ok {
			t.Fatalf("file has unknown id %s", got.ID)
		}
		got.Pos = history.Pos{}
		if !sameTxn(got, w) {
			t.Fatalf("round trip changed %s:\n got  %+v\n want %+v", got.ID, got, w)
		}
	}
}

// sameTxn compares two transactions; nil and empty lists are the same
// empty list (history.Op).
func sameTxn(a, b history.Txn) bool {
	norm := func(t history.Txn) history.Txn {
		ops := append([]history.Op(nil), t.Ops...)
		for i := range ops {
			if len(ops[i].List) == 0 {
				ops[i].List = nil
			}
		}
		if len(ops) == 0 {
			ops = nil
		}
		t.Ops = ops
		return t
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func TestKeyedAndChanSinks(t *testing.T) {
	var mu sync.Mutex
	type msg struct{ key, value string }
	var msgs []msg
	ch := make(chan history.Txn, 10)
	rec := New(MultiSink(KeyedSink(func(k, v []byte) error {
		mu.Lock()
		msgs = append(msgs, msg{string(k), string(v)})
		mu.Unlock()
		return nil
	}), ChanSink(ch)), Options{})
	tx := rec.Begin("sess-1")
	tx.Read("x", nil)
	tx.Write("x", 1)
	tx.Commit()
	got := <-ch
	if len(msgs) != 1 || msgs[0].key != "sess-1" {
		t.Fatalf("keyed messages %v", msgs)
	}
	var d ingest.NativeDecoder
	dec, err := d.Decode([]byte(msgs[0].value), history.Pos{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameTxn(dec, got) || got.ID != "sess-1-1" || len(got.Ops) != 2 {
		t.Fatalf("keyed %+v, chan %+v", dec, got)
	}
}

// store is an in-memory key-value store for the differential test below.
// With locked it runs each transaction under one lock (so histories are
// strict serializable); without, a transaction's read and its write take
// the lock separately (a lost-update machine, like READ COMMITTED).
type store struct {
	mu sync.Mutex
	kv map[int]int
}

// TestSimulatedStores: a serial store's recorded history must pass
// strict-serializable with Δ = 0, which only holds if Begin takes the
// start before the transaction runs and the end after it finished (R3);
// a lost-update store's history must fail serializable, and its
// arithmetic must agree.
func TestSimulatedStores(t *testing.T) {
	for _, locked := range []bool{true, false} {
		t.Run(fmt.Sprintf("locked=%v", locked), func(t *testing.T) {
			var sink SliceSink
			rec := New(&sink, Options{})
			st := &store{kv: map[int]int{}}
			var wg sync.WaitGroup
			committed := 0
			var cmu sync.Mutex
			for c := 0; c < 3; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 12; i++ {
						tx := rec.Begin(fmt.Sprintf("c%d", c))
						st.mu.Lock()
						v, ok := st.kv[0]
						if ok {
							tx.Read(0, v)
						} else {
							tx.Read(0, nil)
						}
						if !locked {
							st.mu.Unlock()
							time.Sleep(20 * time.Microsecond) // let another client read the same value
							st.mu.Lock()
						}
						st.kv[0] = v + 1
						tx.Write(0, v+1)
						st.mu.Unlock()
						tx.Commit()
						cmu.Lock()
						committed++
						cmu.Unlock()
					}
				}()
			}
			wg.Wait()
			h := sink.History()
			lv := history.StrictSerializable
			if !locked {
				lv = history.Serializable
			}
			res, err := incremental.Check(context.Background(), h, history.Options{Level: lv, InDoubt: history.NoInDoubt}, incremental.Config{})
			if err != nil {
				t.Fatal(err)
			}
			lost := committed - st.kv[0]
			t.Logf("%v; lost %d of %d", res.Verdict, lost, committed)
			switch {
			case locked && res.Verdict != incremental.Valid:
				t.Fatalf("serial store fails strict-serializable: %+v", res.Anomalies)
			case !locked && lost > 0 && res.Verdict != incremental.Invalid:
				t.Fatalf("%d updates lost, verdict %v", lost, res.Verdict)
			case !locked && lost == 0 && res.Verdict != incremental.Valid:
				t.Fatalf("no update lost, verdict %v", res.Verdict)
			}
			if !locked && lost == 0 {
				t.Log("the scheduler ran the clients one by one: nothing to find")
			}
		})
	}
}

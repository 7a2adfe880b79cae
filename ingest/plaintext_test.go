package ingest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestReadTextAgainstReference holds readText, which gathers a
// transaction's consecutive lines and cuts ops and values from slabs, to
// readTextRef, the line-at-a-time decoder it replaced (kept here as the
// oracle), on random text histories: transactions interleaved and
// revisited, aborted writes (txn -1) and their set-aside reads, reads of
// 0, all-zero initial-state transactions, large keys and values, a
// transaction that changes session, bad lines. Histories, Stats and
// errors must be the same. readTextRef and parseTextLineRef are the
// previous decoder's code as it was.
func TestReadTextAgainstReference(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := range uint64(n) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := randomText(rng)
		var st1, st2 Stats
		h1, err1 := readText(b, "x", &st1)
		h2, err2 := readTextRef(b, "x", &st2)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || st1 != st2 {
			t.Fatalf("seed %d:\n%s\nerr %v, want %v; stats %+v, want %+v", seed, b, err1, err2, st1, st2)
		}
		if err1 != nil {
			continue
		}
		if !reflect.DeepEqual(h1, h2) {
			t.Fatalf("seed %d:\n%s\ngot  %+v\nwant %+v", seed, b, h1, h2)
		}
	}
}

func randomText(rng *rand.Rand) []byte {
	var b bytes.Buffer
	lines := rng.IntN(40)
	txn, sess := int64(rng.IntN(3)), int64(rng.IntN(3))
	for range lines {
		switch rng.IntN(10) {
		case 0: // another transaction, maybe one seen before
			txn = int64(rng.IntN(6))
			if rng.IntN(3) == 0 {
				txn += 1 << 40 // beyond the dense txn numbers
			}
		case 1:
			txn = -1
		case 2:
			sess = int64(rng.IntN(3))
		}
		c := "r"
		if rng.IntN(2) == 0 {
			c = "w"
		}
		key := int64(rng.IntN(4))
		if rng.IntN(8) == 0 {
			key = rng.Int64N(1 << 62)
		}
		val := int64(rng.IntN(3))
		switch rng.IntN(6) {
		case 0:
			val = 100 + rng.Int64N(1000)
		case 1:
			val = rng.Int64N(1 << 62)
		case 2:
			val = 0
		}
		fmt.Fprintf(&b, "%s(%d,%d,%d,%d)\n", c, key, val, sess, txn)
		switch rng.IntN(60) {
		case 0:
			b.WriteString("x(1,2,3,4)\n")
		case 1: // leading zeros: the same integers
			fmt.Fprintf(&b, "%s(00%d,0%d,%d,0%d)\n", c, key, val, sess, max(txn, 0))
		case 2: // beyond int64
			b.WriteString("w(1,9999999999999999999,1,1)\n")
		case 3: // eighteen and nineteen digits
			b.WriteString("w(999999999999999999,1000000000000000000,1,1)\n")
		}
		if rng.IntN(20) == 0 {
			b.WriteString("\n")
		}
	}
	if rng.IntN(4) == 0 {
		// An initial state written out: all-zero writes of their own.
		for k := range 3 {
			fmt.Fprintf(&b, "w(%d,0,9,99)\n", k)
		}
	}
	return b.Bytes()
}

// TestTextValues: the slab's values are the canonical text of their
// integers, and stay so after more are cut (a value's bytes are never
// written again).
func TestTextValues(t *testing.T) {
	var x textValues
	var got []history.Value
	var want []int64
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3 * slabSize / 8 {
		v := int64(i)
		if i%3 == 0 {
			v = rng.Int64()
			if i%2 == 0 {
				v = -v
			}
		}
		got = append(got, x.of(v))
		want = append(want, v)
	}
	for i, v := range want {
		if string(got[i]) != strconv.FormatInt(v, 10) {
			t.Fatalf("value %d: %q, want %d", i, got[i], v)
		}
	}
}
func readTextRef(all []byte, source string, st *Stats) (*history.History, error) {
	h := &history.History{}
	byTxn := make(map[int64]int)   // txn number -> index in h.Txns
	aborted := make(map[int64]int) // session -> index of its aborted txn
	zeroWrites := make(map[int]int)
	line := 0
	for len(all) > 0 {
		line++
		var l []byte
		if nl := bytes.IndexByte(all, '\n'); nl >= 0 {
			l, all = all[:nl], all[nl+1:]
		} else {
			l, all = all, nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if blank(l) {
			continue
		}
		st.Records++
		pos := history.Pos{Source: source, Line: line}
		kind, nums, field, err := parseTextLineRef(l)
		if err != nil {
			return nil, &history.Error{Pos: pos, Field: field, Err: err}
		}
		key, val, sess, txn := nums[0], nums[1], nums[2], nums[3]
		op := history.Op{Kind: kind, Key: history.IntValue(key), Value: history.IntValue(val)}
		if kind == history.Read && val == 0 {
			op.Value = history.Null
		}
		session := strconv.FormatInt(sess, 10)
		if txn < 0 {
			if kind == history.Read {
				st.SetAside++
				continue
			}
			i, ok := aborted[sess]
			if !ok {
				i = len(h.Txns)
				aborted[sess] = i
				h.Txns = append(h.Txns, history.Txn{ID: "aborted-" + session, Status: history.Aborted, Pos: pos})
			}
			h.Txns[i].Ops = append(h.Txns[i].Ops, op)
			continue
		}
		i, ok := byTxn[txn]
		if !ok {
			i = len(h.Txns)
			byTxn[txn] = i
			h.Txns = append(h.Txns, history.Txn{ID: strconv.FormatInt(txn, 10), Session: session, HasSession: true, Pos: pos})
		} else if h.Txns[i].Session != session {
			return nil, &history.Error{Pos: pos, ID: h.Txns[i].ID, Field: "session", Err: fmt.Errorf("transaction %d is in session %s (line %d), not %s", txn, h.Txns[i].Session, h.Txns[i].Pos.Line, session)}
		}
		if kind == history.Write && val == 0 {
			zeroWrites[i]++
		}
		h.Txns[i].Ops = append(h.Txns[i].Ops, op)
	}
	return dropInitialStates(h, zeroWrites, st)
}
func parseTextLineRef(l []byte) (history.Kind, [4]int64, string, error) {
	var nums [4]int64
	if len(l) < 2 || (l[0] != 'r' && l[0] != 'w') || l[1] != '(' {
		return 0, nums, "op", fmt.Errorf("want r(key,value,session,txn) or w(...), got %q", clip(l))
	}
	kind := history.Read
	if l[0] == 'w' {
		kind = history.Write
	}
	names := [4]string{"key", "value", "session", "txn"}
	i := 2
	for n := range nums {
		start := i
		if n == 3 && i < len(l) && l[i] == '-' {
			i++
		}
		for i < len(l) && l[i] >= '0' && l[i] <= '9' {
			i++
		}
		v, err := strconv.ParseInt(string(l[start:i]), 10, 64)
		if err != nil {
			return 0, nums, names[n], fmt.Errorf("want a decimal integer at byte %d, got %q", start+1, clip(l[start:]))
		}
		nums[n] = v
		want := byte(',')
		if n == 3 {
			want = ')'
		}
		if i >= len(l) || l[i] != want {
			return 0, nums, names[n], fmt.Errorf("want %q at byte %d of %q", want, i+1, clip(l))
		}
		i++
	}
	if i != len(l) {
		return 0, nums, "txn", fmt.Errorf("text after ')' at byte %d: %q", i+1, clip(l[i:]))
	}
	if nums[3] < -1 {
		return 0, nums, "txn", fmt.Errorf("txn %d: want a number >= 0, or -1 for an aborted write", nums[3])
	}
	return kind, nums, "", nil
}

// TestReadTextLargeAgainstReference is TestReadTextAgainstReference at
// the sizes where readText's own bookkeeping acts: more lines than
// estimateAfter (the transactions sized from the first lines' ratio,
// here an underestimate: short transactions first, long ones after), a
// transaction's run of lines longer than a slab (moved to a new slab),
// and transactions revisited after many others (their ops appended
// beside a slab's).
func TestReadTextLargeAgainstReference(t *testing.T) {
	var b bytes.Buffer
	txn := int64(0)
	for i := range estimateAfter + 500 {
		fmt.Fprintf(&b, "w(%d,%d,%d,%d)\n", i%50, i+1, txn%3, txn)
		if i%2 == 1 {
			txn++
		}
	}
	for i := range textSlabOps + 300 {
		fmt.Fprintf(&b, "r(%d,%d,%d,%d)\n", i%50, i%200+1, txn%3, txn)
	}
	for i := range 3 * textSlabOps {
		u := txn + 1 + int64(i/37)
		fmt.Fprintf(&b, "w(%d,%d,%d,%d)\n", 60+i%7, i+1, u%3, u)
		if i%1000 == 999 {
			fmt.Fprintf(&b, "r(1,0,0,0)\nr(2,7,%d,%d)\n", txn%3, txn) // revisits
		}
	}
	var st1, st2 Stats
	h1, err1 := readText(b.Bytes(), "x", &st1)
	h2, err2 := readTextRef(b.Bytes(), "x", &st2)
	if err1 != nil || err2 != nil || st1 != st2 {
		t.Fatalf("err %v, want %v; stats %+v, want %+v", err1, err2, st1, st2)
	}
	if !reflect.DeepEqual(h1, h2) {
		t.Fatalf("the histories differ (%d and %d transactions)", len(h1.Txns), len(h2.Txns))
	}
}

// FuzzReadText: on any input readText gives readTextRef's history,
// stats and error (line and field).
func FuzzReadText(f *testing.F) {
	for seed := range uint64(20) {
		f.Add(randomText(rand.New(rand.NewPCG(seed, 7))))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var st1, st2 Stats
		h1, err1 := readText(b, "x", &st1)
		h2, err2 := readTextRef(b, "x", &st2)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || st1 != st2 {
			t.Fatalf("err %v, want %v; stats %+v, want %+v", err1, err2, st1, st2)
		}
		if err1 == nil && !reflect.DeepEqual(h1, h2) {
			t.Fatalf("got  %+v\nwant %+v", h1, h2)
		}
	})
}

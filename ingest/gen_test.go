package ingest

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// Random transactions for property, differential and benchmark inputs.

// randScalar returns a canonical scalar value of a random kind; keyOnly
// restricts it to the kinds a key may have.
func randScalar(rng *rand.Rand, keyOnly bool) history.Value {
	n := 6
	if keyOnly {
		n = 2
	}
	switch rng.IntN(n) {
	case 0:
		switch rng.IntN(4) {
		case 0:
			return history.IntValue(rng.Int64())
		case 1:
			return history.IntValue(-rng.Int64() - 1)
		default:
			return history.IntValue(int64(rng.IntN(10)))
		}
	case 1:
		return history.StringValue(randString(rng))
	case 2:
		return [...]history.Value{"1.0", "1.5", "-0.25", "1e5", "1E+5", "0.0", "-0.0", "3.14159265358979323846264338327950288"}[rng.IntN(8)]
	case 3:
		return [...]history.Value{"true", "false"}[rng.IntN(2)]
	default:
		return history.IntValue(int64(rng.IntN(100)))
	}
}

// randString returns a short string of awkward characters. It is valid
// UTF-8, as every decoded string is (decoders replace invalid bytes with
// U+FFFD).
func randString(rng *rand.Rand) string {
	alphabet := []string{"a", "b", "x", "1", "\"", "\\", "\n", "\x00", "é", "😀", "<", "\u2028", "\x7f", " ", "\uFFFD", "/", ":"}
	var b []byte
	for range rng.IntN(5) {
		b = append(b, alphabet[rng.IntN(len(alphabet))]...)
	}
	return string(b)
}

// randTxn returns a valid transaction; ops of list keys and register keys
// are not kept apart (Decode does not need it).
func randTxn(rng *rand.Rand, i int) history.Txn {
	t := history.Txn{ID: fmt.Sprintf("t%d", i), Status: history.Status(rng.IntN(3))}
	if rng.IntN(4) == 0 {
		t.ID = randString(rng) + strconv.Itoa(i)
	}
	if rng.IntN(3) > 0 {
		t.Session, t.HasSession = fmt.Sprintf("c%d", rng.IntN(5)), true
	}
	if rng.IntN(3) > 0 {
		t.Start = rng.Int64N(1 << 62)
		t.End = t.Start + rng.Int64N(1<<40)
		t.HasTime = true
	}
	for range rng.IntN(7) {
		op := history.Op{Kind: history.Kind(rng.IntN(3)), Key: randScalar(rng, true)}
		switch {
		case op.Kind == history.Read && rng.IntN(3) == 0:
			op.IsList = true
			for range rng.IntN(4) {
				op.List = append(op.List, randScalar(rng, false))
			}
		case op.Kind == history.Read && rng.IntN(3) == 0:
			op.Value = history.Null
		default:
			op.Value = randScalar(rng, false)
		}
		t.Ops = append(t.Ops, op)
	}
	return t
}

// realisticLine returns a native event shaped like production traffic:
// nanosecond timestamps, about 4.5 micro-ops, small integer values, a mix
// of register and list keys (about 200 bytes).
func realisticLine(rng *rand.Rand, i int) []byte {
	session := rng.IntN(64)
	start := int64(1763719200000000000) + int64(i)*10000 + rng.Int64N(5000)
	t := history.Txn{
		ID:      fmt.Sprintf("c%d-%d", session, i),
		Session: fmt.Sprintf("c%d", session), HasSession: true,
		Start: start, End: start + 1000000 + rng.Int64N(5000000), HasTime: true,
		Status: history.Committed,
	}
	nops := 2 + rng.IntN(6) // mean 4.5
	for range nops {
		k := rng.IntN(4)
		switch k {
		case 0:
			t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: history.StringValue("x" + strconv.Itoa(rng.IntN(100))), Value: history.IntValue(int64(rng.IntN(1000)))})
		case 1:
			t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: history.StringValue("x" + strconv.Itoa(rng.IntN(100))), Value: history.IntValue(int64(rng.IntN(1000)))})
		case 2:
			t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: history.StringValue("l" + strconv.Itoa(rng.IntN(100))), Value: history.IntValue(int64(rng.IntN(1000)))})
		default:
			var l []history.Value
			for range rng.IntN(4) {
				l = append(l, history.IntValue(int64(rng.IntN(1000))))
			}
			t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: history.StringValue("l" + strconv.Itoa(rng.IntN(100))), IsList: true, List: l})
		}
	}
	return AppendNative(nil, &t)
}

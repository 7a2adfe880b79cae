package online

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// randBodyTxn draws a transaction that reaches every branch of the
// codec: empty and long (multi-byte length) strings, negative and
// extreme times and positions, nil and empty lists, many ops.
func randBodyTxn(r *rand.Rand) history.Txn {
	str := func() string {
		switch r.IntN(6) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("k", 100+r.IntN(300)) // length >= 0x80 for some
		default:
			return string(rune('a'+r.IntN(26))) + strings.Repeat("x", r.IntN(12))
		}
	}
	num := func() int64 {
		switch r.IntN(5) {
		case 0:
			return math.MinInt64
		case 1:
			return math.MaxInt64
		case 2:
			return -r.Int64N(1 << 40)
		default:
			return r.Int64N(1 << 62)
		}
	}
	t := history.Txn{ID: str(), Session: str(), Start: num(), End: num(),
		HasSession: r.IntN(2) == 0, HasTime: r.IntN(2) == 0, Status: history.Status(r.IntN(3)),
		Pos: history.Pos{Source: str(), Line: int(num()), Offset: num()}}
	nops := r.IntN(4)
	if r.IntN(10) == 0 {
		nops = 130 + r.IntN(50) // a multi-byte op count
	}
	for range nops {
		op := history.Op{Kind: history.Kind(r.IntN(3)), IsList: r.IntN(3) == 0, Key: history.Key(str()), Value: history.Value(str())}
		switch r.IntN(4) {
		case 0:
			op.List = []history.Value{}
		case 1:
			n := r.IntN(5)
			if r.IntN(8) == 0 {
				n = 200
			}
			for range n {
				op.List = append(op.List, history.Value(str()))
			}
		}
		t.Ops = append(t.Ops, op)
	}
	return t
}

// TestAppendBodyAsAppendTxn holds AppendBody to appendTxn's bytes (the
// record format is durable: call logs and body files written by one
// encoder are read by DecodeBody whichever wrote them), after a prefix
// and into buffers with and without spare capacity.
func TestAppendBodyAsAppendTxn(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	for i := range 20000 {
		tx := randBodyTxn(r)
		prefix := []byte("pre")[:r.IntN(4)]
		var buf []byte
		if r.IntN(2) == 0 {
			buf = make([]byte, 0, r.IntN(4096))
		}
		buf = append(buf, prefix...)
		want := appendTxn(append([]byte(nil), prefix...), &tx)
		got := AppendBody(buf, &tx)
		if !bytes.Equal(got, want) {
			t.Fatalf("txn %d: AppendBody differs from appendTxn\n got %x\nwant %x", i, got, want)
		}
		back, err := DecodeBody(got[len(prefix):])
		if err != nil {
			t.Fatalf("txn %d: %v", i, err)
		}
		if again := appendTxn(nil, &back); !bytes.Equal(again, want[len(prefix):]) {
			t.Fatalf("txn %d: the round trip changed the record", i)
		}
	}
}

func FuzzAppendBody(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		tx := randBodyTxn(rand.New(rand.NewPCG(a, b)))
		if got, want := AppendBody(nil, &tx), appendTxn(nil, &tx); !bytes.Equal(got, want) {
			t.Fatalf("AppendBody differs from appendTxn\n got %x\nwant %x", got, want)
		}
	})
}

package incremental

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
)

// runFlags is a per-transaction flag (closed, quarantined, in the
// instance), one bit each: as a bool per transaction, the three flags were
// what the evicting engine's memory still grew by on a long stream, 3
// bytes per transaction ever released. Snapshots store them as run
// lengths: alternating runs of false and true, the first of false
// (possibly empty). Stored as one JSON bool per transaction, they made
// every checkpoint grow with the whole stream, some 18 bytes per
// transaction (180 MB per checkpoint after 10M); nearly all of them are
// one long run of evicted, closed transactions.
type runFlags struct {
	words []uint64
	n     int
}

// makeFlags returns n flags, all false.
func makeFlags(n int) runFlags {
	return runFlags{words: make([]uint64, (n+63)/64), n: n}
}

func (f *runFlags) len() int { return f.n }

func (f *runFlags) get(i int) bool {
	if uint(i) >= uint(f.n) {
		panic(fmt.Sprintf("incremental: flag %d of %d", i, f.n))
	}
	return f.words[i>>6]>>(i&63)&1 != 0
}

func (f *runFlags) set(i int, v bool) {
	if uint(i) >= uint(f.n) {
		panic(fmt.Sprintf("incremental: flag %d of %d", i, f.n))
	}
	if v {
		f.words[i>>6] |= 1 << (i & 63)
	} else {
		f.words[i>>6] &^= 1 << (i & 63)
	}
}

// push appends a flag.
func (f *runFlags) push(v bool) {
	if f.n&63 == 0 {
		f.words = append(f.words, 0)
	}
	f.n++
	f.set(f.n-1, v)
}

// setAll sets every flag to v.
func (f *runFlags) setAll(v bool) {
	for i := range f.words {
		f.words[i] = 0
		if v {
			f.words[i] = ^uint64(0)
		}
	}
	if v && f.n&63 != 0 {
		f.words[len(f.words)-1] = 1<<(f.n&63) - 1
	}
}

// bools returns the flags as a slice, for tests.
func (f *runFlags) bools() []bool {
	out := make([]bool, f.n)
	for i := range out {
		out[i] = f.get(i)
	}
	return out
}

func flagsOf(bs []bool) runFlags {
	f := makeFlags(len(bs))
	for i, v := range bs {
		f.set(i, v)
	}
	return f
}

// MarshalJSON implements json.Marshaler. It steps a word at a time:
// every checkpoint encodes the flags of every transaction ever released,
// and bit by bit that was 50 ms per checkpoint after 10M transactions.
func (f runFlags) MarshalJSON() ([]byte, error) {
	runs := []int{}
	at, cur := 0, false
	for {
		next := f.next(at, !cur)
		runs = append(runs, next-at)
		if next == f.n {
			return json.Marshal(runs)
		}
		at, cur = next, !cur
	}
}

// next returns the first index from i on whose flag is v, or len.
func (f *runFlags) next(i int, v bool) int {
	for i < f.n {
		w := f.words[i>>6]
		if !v {
			w = ^w
		}
		if w >>= uint(i & 63); w != 0 {
			return min(i+bits.TrailingZeros64(w), f.n)
		}
		i = i | 63 + 1
	}
	return f.n
}

// UnmarshalJSON implements json.Unmarshaler. It also reads the one-bool-
// per-transaction form of snapshot version 2.
func (f *runFlags) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = runFlags{}
		return nil
	}
	if inner := bytes.TrimSpace(bytes.TrimPrefix(b, []byte("["))); len(inner) > 0 && (inner[0] == 't' || inner[0] == 'f') {
		var old []bool
		if err := json.Unmarshal(b, &old); err != nil {
			return err
		}
		*f = flagsOf(old)
		return nil
	}
	var runs []int
	if err := json.Unmarshal(b, &runs); err != nil {
		return err
	}
	total := 0
	for _, n := range runs {
		if n < 0 || total+n < total {
			return fmt.Errorf("flag runs: bad run length %d", n)
		}
		total += n
	}
	out := makeFlags(total)
	at := 0
	for i, n := range runs {
		if i%2 == 1 {
			for k := at; k < at+n; k++ {
				out.set(k, true)
			}
		}
		at += n
	}
	*f = out
	return nil
}

package online

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
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
//
// Even a bit each grew for ever (3.7 MB of a 10M stream's 24 MB of live
// heap, 1.6 GB a day at 50K transactions/s), so the words of old
// transactions are folded into a prefix that keeps only its words that
// are not all fill: an old transaction's flags are settled (closed, out
// of the instance, not quarantined) but for the few an alert quarantined
// or a list key pins.
type runFlags struct {
	words []uint64 // flags from base on
	base  int      // a multiple of 64: flags below it are in the prefix
	fill  bool     // the prefix's flags are fill but in its odd words
	odd   []oddWord
	n     int
	// ones is how many flags are true, kept by every change (count): the
	// number of members without a visit of them.
	ones int
}

// oddWord is a word of the prefix that is not all fill.
type oddWord struct {
	at int // word index (flag at/64)
	w  uint64
}

// The prefix takes the oldest words once more than foldAbove are held,
// leaving foldKeep (at least 1: the word being filled stays): amortized,
// a word is moved once. Variables so that tests can fold small sets.
var foldAbove, foldKeep = 1024, 512

// makeFlags returns n flags, all false.
func makeFlags(n int) runFlags {
	return runFlags{words: make([]uint64, (n+63)/64), n: n}
}

func (f *runFlags) len() int { return f.n }

// count returns how many flags are true.
func (f *runFlags) count() int { return f.ones }

func (f *runFlags) fillWord() uint64 {
	if f.fill {
		return ^uint64(0)
	}
	return 0
}

// prefixWord returns the prefix's word k and where it is (or would be)
// in odd.
func (f *runFlags) prefixWord(k int) (uint64, int, bool) {
	j, ok := slices.BinarySearchFunc(f.odd, k, func(o oddWord, k int) int { return cmp.Compare(o.at, k) })
	if ok {
		return f.odd[j].w, j, true
	}
	return f.fillWord(), j, false
}

func (f *runFlags) get(i int) bool {
	if uint(i) >= uint(f.n) {
		panic(fmt.Sprintf("incremental: flag %d of %d", i, f.n))
	}
	if i >= f.base {
		i -= f.base
		return f.words[i>>6]>>(i&63)&1 != 0
	}
	w, _, _ := f.prefixWord(i >> 6)
	return w>>(i&63)&1 != 0
}

func (f *runFlags) set(i int, v bool) {
	if f.get(i) == v {
		// Unchanged (and get panics on a flag out of range).
		return
	}
	if v {
		f.ones++
	} else {
		f.ones--
	}
	if i >= f.base {
		i -= f.base
		if v {
			f.words[i>>6] |= 1 << (i & 63)
		} else {
			f.words[i>>6] &^= 1 << (i & 63)
		}
		return
	}
	w, j, ok := f.prefixWord(i >> 6)
	if v {
		w |= 1 << (i & 63)
	} else {
		w &^= 1 << (i & 63)
	}
	switch {
	case w == f.fillWord() && ok:
		f.odd = slices.Delete(f.odd, j, j+1)
	case ok:
		f.odd[j].w = w
	case w != f.fillWord():
		f.odd = slices.Insert(f.odd, j, oddWord{i >> 6, w})
	}
}

// push appends a flag.
func (f *runFlags) push(v bool) {
	if f.n&63 == 0 {
		f.words = append(f.words, 0)
	}
	f.n++
	f.set(f.n-1, v)
	if len(f.words) > foldAbove {
		f.fold(len(f.words) - foldKeep)
	}
}

// fold moves the oldest m words into the prefix.
func (f *runFlags) fold(m int) {
	if f.base == 0 && len(f.odd) == 0 {
		// The prefix's first words choose its fill: the flag's settled
		// value, which most of the oldest transactions have.
		ones := 0
		for _, w := range f.words[:m] {
			ones += bits.OnesCount64(w)
		}
		f.fill = 2*ones > 64*m
	}
	for j, w := range f.words[:m] {
		if w != f.fillWord() {
			f.odd = append(f.odd, oddWord{f.base>>6 + j, w})
		}
	}
	// Copied down, not resliced: the old words must not stay reachable.
	f.words = f.words[:copy(f.words, f.words[m:])]
	if cap(f.words) > 2*foldAbove {
		// Nor the array of a set made whole (makeFlags(n) in a replay,
		// a restore): a replay after each alert would keep n/8 bytes.
		f.words = slices.Clone(f.words)
	}
	f.base += 64 * m
}

// setAll sets every flag to v.
func (f *runFlags) setAll(v bool) {
	f.fill, f.odd = v, nil
	f.ones = 0
	if v {
		f.ones = f.n
	}
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
		var w uint64
		if i >= f.base {
			w = f.words[(i-f.base)>>6]
		} else {
			var j int
			var ok bool
			if w, j, ok = f.prefixWord(i >> 6); !ok && v != f.fill {
				// Fill words have no v: on to the next odd word.
				i = f.base
				if j < len(f.odd) {
					i = 64 * f.odd[j].at
				}
				continue
			}
		}
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
	if len(out.words) > foldAbove {
		out.fold(len(out.words) - foldKeep)
	}
	*f = out
	return nil
}

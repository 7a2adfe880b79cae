package stampcheck

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// pinPrefix starts the keys of the pins (below). A key is canonical text,
// so this is the JSON spelling of a string that starts with a NUL byte;
// an input that uses such a key is refused by withPins rather than
// confused with a pin.
var pinPrefix = string(history.StringValue("\x00stamp "))

// withPins returns h with every order the facts claim written into it as
// a read-from: for a claimed order a < b, a reads a fresh key as absent
// and writes it, and b reads a's value. A wr edge is the only thing such
// operations can add (one writer, one reader, a key no one else touches;
// a's read only fixes the key's initial value as absent), so a completion of the
// level for the pinned history is exactly a completion of h whose serial
// order keeps the claimed orders, and the black-box checker decides
// "valid with the facts" on it. The pin of a < b is a read of b that the
// projection of docs/SEMANTICS.md §3 keeps iff a is a member, so H|C
// pinned is H|C with the orders among C's members, as the definition
// wants, provided the pins are transitively closed among C or rebuilt
// from C (Consistent rebuilds them).
func withPins(h *history.History, pins [][2]int32) (*history.History, error) {
	for i := range h.Txns {
		for _, op := range h.Txns[i].Ops {
			if strings.HasPrefix(string(op.Key), pinPrefix[:len(pinPrefix)-1]) {
				return nil, fmt.Errorf("stampcheck: txn %s uses key %s, which is reserved for the facts' orders", h.Txns[i].ID, op.Key)
			}
		}
	}
	out := &history.History{Txns: slices.Clone(h.Txns)}
	extra := make([][]history.Op, len(h.Txns))
	for n, p := range pins {
		k := history.Value(pinPrefix[:len(pinPrefix)-1] + strconv.Itoa(n) + `"`)
		// The writer reads the key as absent first: under an unknown
		// initial state the reader could otherwise have read "1" from
		// the initial version, and the pin would order nothing.
		extra[p[0]] = append(extra[p[0]], history.Op{Kind: history.Read, Key: k, Value: history.Null}, history.Op{Kind: history.Write, Key: k, Value: "1"})
		extra[p[1]] = append(extra[p[1]], history.Op{Kind: history.Read, Key: k, Value: "1"})
	}
	for i, ops := range extra {
		if len(ops) == 0 {
			continue
		}
		t := &out.Txns[i]
		// Pin operations first, each pin's own read before its write:
		// every pin read is then external, and the transaction's own
		// operations are untouched.
		all := make([]history.Op, 0, len(t.Ops)+len(ops))
		all = append(all, ops...)
		all = append(all, t.Ops...)
		t.Ops = all
	}
	return out, nil
}

// commitPins are the orders commit stamps claim among committed
// transactions: every member of one stamp value before every member of
// the next (equal stamps stay unordered). With no ties that is n-1 pins.
func commitPins(h *history.History) [][2]int32 {
	var st []int32
	for i := range h.Txns {
		if h.Txns[i].Status == history.Committed && h.Facts[i].Has&history.HasCommitTS != 0 {
			st = append(st, int32(i))
		}
	}
	slices.SortFunc(st, func(a, b int32) int { return cmp.Compare(h.Facts[a].CommitTS, h.Facts[b].CommitTS) })
	var pins [][2]int32
	for lo := 0; lo < len(st); {
		hi := lo
		for hi < len(st) && h.Facts[st[hi]].CommitTS == h.Facts[st[lo]].CommitTS {
			hi++
		}
		next := hi
		for next < len(st) && h.Facts[st[next]].CommitTS == h.Facts[st[hi]].CommitTS {
			next++
		}
		for _, a := range st[lo:hi] {
			for _, b := range st[hi:next] {
				pins = append(pins, [2]int32{a, b})
			}
		}
		lo = hi
	}
	return pins
}

// snapshotPins are the orders PostgreSQL's facts fix: per key the
// version order (ww), each read's source (wr) and the version after it
// (rw). a must come from a Witnessed analysis.
func snapshotPins(h *history.History, a *analysis) [][2]int32 {
	var pins [][2]int32
	next := map[history.Key]map[int32]int32{}
	first := map[history.Key]int32{}
	chains := a.chains()
	for k, ch := range chains {
		m := map[int32]int32{}
		for p := 1; p < len(ch); p++ {
			pins = append(pins, [2]int32{ch[p-1], ch[p]})
			m[ch[p-1]] = ch[p]
		}
		next[k] = m
		if len(ch) > 0 {
			first[k] = ch[0]
		}
	}
	for t, reads := range a.src {
		for n, w := range reads {
			k := h.Txns[t].Ops[n].Key
			after, ok := first[k], true
			if w >= 0 {
				pins = append(pins, [2]int32{w, t})
				after, ok = next[k][w]
			} else {
				_, ok = first[k]
			}
			if ok && after != t {
				pins = append(pins, [2]int32{t, after})
			}
		}
	}
	slices.SortFunc(pins, func(x, y [2]int32) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	return slices.Compact(pins)
}

// consistentSerial decides whether h (a projection, or the whole history)
// is valid at a serializable level with its facts, and returns the
// black-box result on the pinned history (its witness, or its core).
func consistentSerial(ctx context.Context, h *history.History, opts history.Options) (bool, *incremental.Result, error) {
	var pins [][2]int32
	if usesPG(h) {
		if unknownWrites(h) {
			return true, nil, nil // §10: PostgreSQL's facts are then not used
		}
		f, a := analyze(h, opts, SnapshotRules{})
		switch f.Outcome {
		case Contradicted:
			return false, nil, nil
		case Open:
			return true, nil, nil // the facts are not used: nothing to contradict
		}
		pins = snapshotPins(h, a)
	} else {
		pins = commitPins(h)
	}
	ph, err := withPins(h, pins)
	if err != nil {
		return false, nil, err
	}
	res, err := incremental.Check(ctx, ph, opts, incremental.Config{})
	if err != nil {
		return false, nil, err
	}
	if res.Verdict == incremental.Unknown {
		return false, res, ctx.Err()
	}
	return res.Verdict == incremental.Valid, res, nil
}

// usesPG reports whether h's facts are PostgreSQL's (xid and snapshot)
// rather than stamps: commit stamps win when both are present.
func usesPG(h *history.History) bool {
	pg := false
	for i := range h.Facts {
		if h.Facts[i].Has&history.HasCommitTS != 0 {
			return false
		}
		pg = pg || h.Facts[i].Has&history.HasSnapshot != 0
	}
	return pg
}

// unknownWrites reports whether a transaction of unknown outcome writes:
// at the serializable levels PostgreSQL's facts are then not used (its
// snapshot constrains it only if it committed, which only a search over
// its commit can say, and the pins cannot be made conditional on it).
func unknownWrites(h *history.History) bool {
	for i := range h.Txns {
		if h.Txns[i].Status == history.Unknown && h.Txns[i].Writes() {
			return true
		}
	}
	return false
}

package online

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
)

// The members by key, kept from one step to the next (docs/SEMANTICS.md
// §5 "The members by key, kept across steps").
//
// markUnobservable needs, for the few keys the step's candidates write,
// every member whose body reads or writes one of them: ghosts included,
// and on read-modify-write streams the ghosts grow with the stream (25K
// members at 100K transactions), so a pass over every member's ops at
// every step cost the stream, not the window. memberKeys indexes the
// members' bodies by key once and keeps the index:
//
//   - MK1 (superset): after refresh, every member i has an entry under
//     every key of o.log.at(i).Ops. refresh visits every member (an
//     integer and a slice header each, no key hashed) and indexes again
//     the member whose ops are not the slice it indexed (a new member, a
//     body stubbed or read back from the spill). The slice indexed is
//     held in sig, so that its array is not reused for another body
//     while the entry stands.
//   - MK2: an entry may be stale (a member gone, or a body indexed
//     before): the query keeps only members (Member) whose ops as they
//     are now touch one of the keys, so a stale entry costs a look.
//   - MK3 (memory): when the entries outnumber twice the members' own,
//     the index is rebuilt from the members, so it is bounded by the
//     members, not by the stream; sig drops a member once it has left.
type memberKeys struct {
	// byKey names each key's list in lists: an append to a key already
	// indexed costs one lookup, where a map of lists cost a lookup and
	// an assignment, each hashing the key (a tenth of build's CPU on
	// read-modify-write streams, where every arrival indexes about ten
	// keys and every rebuild (MK3) all the members' keys again).
	byKey map[history.Key]int32
	lists [][]int
	sig   map[int]opsSig
	// entries counts byKey's entries; the index is rebuilt when they
	// outnumber twice the members' own.
	entries int
}

// opsSig is the ops slice a member was indexed with and its number of
// distinct keys.
type opsSig struct {
	ops []history.Op
	n   int
}

func sameOps(a, b []history.Op) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// add indexes member i's ops and returns its number of distinct keys.
func (mk *memberKeys) add(i int, ops []history.Op) int {
	n := 0
	for j := range ops {
		k := ops[j].Key
		dup := false
		for _, prev := range ops[:j] {
			if prev.Key == k {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		j, ok := mk.byKey[k]
		if !ok {
			j = int32(len(mk.lists))
			mk.byKey[k] = j
			mk.lists = append(mk.lists, nil)
		}
		mk.lists[j] = append(mk.lists[j], i)
		n++
	}
	mk.sig[i] = opsSig{ops: ops, n: n}
	mk.entries += n
	return n
}

// refresh makes MK1 hold for members.
func (mk *memberKeys) refresh(o *Online, members []int) {
	if mk.byKey == nil {
		mk.byKey, mk.sig = map[history.Key]int32{}, map[int]opsSig{}
	}
	// sig holds a slice only while its member is one: a body that left
	// is not kept in memory by the index.
	for i := range mk.sig {
		if !o.ev.Member.get(i) {
			delete(mk.sig, i)
		}
	}
	live := 0
	for _, i := range members {
		ops := o.log.at(i).Ops
		s, ok := mk.sig[i]
		if !ok || !sameOps(s.ops, ops) {
			s.n = mk.add(i, ops)
		}
		live += s.n
	}
	if mk.entries > 2*live+1024 {
		clear(mk.byKey)
		// The lists' arrays go with the index (MK3): kept, each would
		// hold the largest list ever numbered j.
		clear(mk.lists)
		mk.lists = mk.lists[:0]
		clear(mk.sig)
		mk.entries = 0
		for _, i := range members {
			mk.add(i, o.log.at(i).Ops)
		}
	}
}

// touching returns, in released order, the members with an op on one of
// keys: the members markUnobservable's pass kept.
func (mk *memberKeys) touching(o *Online, keys map[history.Key]bool, out []int) []int {
	out = out[:0]
	for k := range keys {
		j, ok := mk.byKey[k]
		if !ok {
			continue
		}
		for _, i := range mk.lists[j] {
			if o.ev.Member.get(i) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// MK2: an entry may be of a body the member no longer has (stubbed,
	// or folded): keep the members whose ops now touch a key.
	return slices.DeleteFunc(out, func(i int) bool {
		return !slices.ContainsFunc(o.log.at(i).Ops, func(op history.Op) bool { return keys[op.Key] })
	})
}

// memberKeysOff turns the index off (tests: the pass over every member).
var memberKeysOff bool

// memberKeysFrom: the index is used once the members are this many times
// the window (ghosts are most of them); below, the pass over every member
// (on a burst the index only cost its build and 20-30 MB).
var memberKeysFrom = 2

// memberKeysChecked counts the queries the self-check compared.
var memberKeysChecked atomic.Int64

// unobservableScope returns the members markUnobservable reads: those
// with an op on one of keys, from the index (or every member, with the
// index off). Under the self-check the index's answer is compared with
// the pass over every member.
func (o *Online) unobservableScope(members []int, keys map[history.Key]bool) []int {
	if memberKeysOff || len(members) < memberKeysFrom*len(o.ev.windowList()) {
		// Few ghosts (a burst: the members are the window): the pass
		// costs less than the index's build and memory.
		return members
	}
	mk := &o.ev.mk
	mk.refresh(o, members)
	o.ev.mkOut = mk.touching(o, keys, o.ev.mkOut)
	if selfCheck.Load() {
		var want []int
		for _, i := range members {
			if slices.ContainsFunc(o.log.at(i).Ops, func(op history.Op) bool { return keys[op.Key] }) {
				want = append(want, i)
			}
		}
		if !slices.Equal(o.ev.mkOut, want) {
			panic(fmt.Sprintf("engine self-check: members by key %v, the pass over every member %v", o.ev.mkOut, want))
		}
		memberKeysChecked.Add(1)
	}
	return o.ev.mkOut
}

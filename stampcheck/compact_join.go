package stampcheck

import (
	"math"
	"unsafe"
)

// Part returns an empty compact form for a later part of the same input
// (ingest.ScanNativeSplit's), to be filled by AddIDs in that part's own
// numbering of texts and joined after c (Join): it requires what c
// requires and hashes ids with c's seed (idSet.dup compares the hashes of
// both). Call it before c is filled: it notes c's arrays.
//
// The part's transactions are stored, when they fit, in c's own arrays
// (its sizeHint's room) from the index of the first one's line (its
// Pos.Line - 1): no more transactions than lines come before it, so c,
// filled from those lines, never reaches them, and Join finds them in
// place when every line before was a transaction, instead of copying
// them (a copy of about 30 MB at 1M, 0.2 of 2.9 profiled CPU s;
// docs/SEMANTICS.md §10 "The split scan"). Where they do not fit, or the
// line is not known, they have arrays of their own and Join copies them.
func (c *Compact) Part(sizeHint int) *Compact {
	p := NewCompact(0)
	p.ids.text = make([]byte, 0, 8*sizeHint) // as init's: ids of up to 8 bytes without growing
	p.need = c.need
	p.ids.seed = c.ids.seed
	p.place = &placement{txns: c.txns[:cap(c.txns)], end: c.ids.end[:cap(c.ids.end)], hash: c.ids.hash[:cap(c.ids.hash)], hint: sizeHint}
	return p
}

// placement is where a Part may store its per-transaction arrays: its
// first form's, at their capacity (taken before that form is filled, so
// that the two goroutines share no slice header, only disjoint elements).
type placement struct {
	txns []ctxn
	end  []int32
	hash []uint64
	hint int
}

// placeAt places a Part's arrays at index at of its first form's (see
// Part), or gives them their own room when they do not fit there.
func (c *Compact) placeAt(at int) {
	pl := c.place
	c.place = nil
	if len(c.txns) > 0 {
		return // placed already
	}
	if at >= 0 && at < len(pl.txns) && at < len(pl.end) && at < len(pl.hash) {
		c.txns = pl.txns[at:at:len(pl.txns)]
		c.ids.end = pl.end[at:at:len(pl.end)]
		c.ids.hash = pl.hash[at:at:len(pl.hash)]
		return
	}
	c.txns = make([]ctxn, 0, pl.hint)
	c.ids.end = make([]int32, 0, pl.hint)
	c.ids.hash = make([]uint64, 0, pl.hint)
}

// follows reports whether b starts right after a's end in a's array: a
// can then grow over it without a copy.
func follows[T any](a, b []T) bool {
	return len(b) > 0 && cap(a)-len(a) >= len(b) && &a[:len(a)+1][len(a)] == &b[0]
}

// overlaps reports whether a and b share an element.
func overlaps[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	size := unsafe.Sizeof(a[0])
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa <= pb && pb < pa+uintptr(len(a))*size || pb <= pa && pa < pb+uintptr(len(b))*size
}

// extend is append(a, b...) without the copy when b follows a (follows).
func extend[T any](a, b []T) []T {
	if follows(a, b) {
		return a[:len(a)+len(b)]
	}
	return append(a, b...)
}

// HasFacts reports whether a transaction added carried a database fact
// (without one, CheckSerial and CheckSnapshot have nothing to witness, and
// check tries client time instead).
func (c *Compact) HasFacts() bool { return c.facts }

// Join appends p, a Part of c filled from the input's lines right after
// c's, to c, and leaves p unusable. remap maps p's text ids of 0 or more
// to c's numbering (ingest.Split.Remap: the ids one scan of both parts
// gives); negative ids (integers numbered by themselves) are the same in
// both. After it, c is the compact form that AddIDs over c's lines then
// p's, in one numbering, builds: the same transactions, ops, values,
// lists, key kinds, dense key ids and session ids (docs/SEMANTICS.md §10
// "The split scan"), so every check reads it alike.
//
// A refusal of p becomes c's when c has none; a key p uses as a list and
// c as a register (or the reverse) is refused here, as AddIDs would have
// at p's first such op. Its reason may then differ from the one a single
// AddIDs pass gives, only when p refused for another reason at a later
// line: a caller that reports the reason reads the input again in one
// pass on any refusal.
func (c *Compact) Join(p *Compact, remap []int32) {
	if c.not != "" {
		return
	}
	if p.not != "" {
		c.not = p.not
		return
	}
	if c.texts != nil || p.texts != nil {
		// Add numbers texts itself, per form: no remap relates the two.
		c.not = "a compact form filled by Add cannot be joined"
		return
	}
	if overlaps(c.txns, p.txns) || overlaps(c.ids.end, p.ids.end) || overlaps(c.ids.hash, p.ids.hash) {
		// c grew into the room p was placed in: p's first line was not
		// after c's lines (a caller's error), and one of them is
		// overwritten. Refused, never read.
		c.not = "a part placed over its first form's transactions"
		return
	}
	if len(c.ids.text)+len(p.ids.text) > math.MaxInt32-1 {
		c.not = "too large for int32 offsets"
		return
	}
	// p's dense keys, in p's order (its order of first use), to c's:
	// those new to c take the next ids in that order, as AddIDs over
	// both parts would give them at their first use, which is in p.
	pText := make([]int32, p.nkeys) // p's dense key -> p's text id
	for tid, e := range p.keyOf {
		if e != 0 {
			pText[e>>2-1] = int32(tid)
		}
	}
	keyMap := make([]uint32, p.nkeys)
	for pk, tid := range pText {
		kid := remap[tid]
		if int(kid) >= len(c.keyOf) {
			c.growKeyOf(int(kid))
		}
		e := c.keyOf[kid]
		if e == 0 {
			if c.nkeys == maxKeys {
				c.not = "too many keys for the compact form"
				return
			}
			c.nkeys++
			e = uint32(c.nkeys) << 2
		}
		// The kinds as History.Validate joins them: a key is a list or a
		// register in both parts alike, or undecided (register reads
		// only) in one of them.
		if want := p.keyOf[tid] & 3; want != 0 && e&3 != want {
			if e&3 != 0 {
				c.not = "a key used as a list and as a register (an input error)"
				return
			}
			e |= want
		}
		c.keyOf[kid] = e
		keyMap[pk] = e>>2 - 1
	}
	// Sessions: p's names in p's order of first sight, to c's ids.
	pSess := p.sessions.Keys()
	sessMap := make([]int32, len(pSess))
	for s, name := range pSess {
		sessMap[s] = c.sessions.Get(name)
	}
	// Ops, in place: keys to c's dense ids, values and list elements to
	// c's text ids, list positions past c's list chunks.
	if len(c.lists)+len(p.lists) >= math.MaxInt32>>listShift {
		c.not = "a list read too long for the compact form"
		return
	}
	listBase := int32(len(c.lists)) << listShift
	for _, ch := range p.ops {
		for i := range ch {
			o := &ch[i]
			val := o.val
			if o.isList() {
				l := p.listAt(val)
				for j, id := range l {
					if id >= 0 {
						l[j] = remap[id]
					}
				}
				val += listBase
			} else if val >= 0 {
				val = remap[val]
			}
			*o = newCop(int32(keyMap[o.key()]), o.kind(), o.isList(), val)
		}
	}
	opBase := int32(len(c.ops))
	for i := range p.txns {
		t := &p.txns[i]
		t.opChunk += opBase
		if t.session >= 0 {
			t.session = sessMap[t.session]
		}
	}
	c.ops = append(c.ops, p.ops...)
	c.lists = append(c.lists, p.lists...)
	c.txns = extend(c.txns, p.txns)
	textBase := int32(len(c.ids.text))
	c.ids.text = append(c.ids.text, p.ids.text...)
	for i := range p.ids.end {
		p.ids.end[i] += textBase
	}
	c.ids.end = extend(c.ids.end, p.ids.end)
	c.ids.hash = extend(c.ids.hash, p.ids.hash)
	c.ids.checked, c.ids.found = 0, false
	c.facts = c.facts || p.facts
	*p = Compact{not: "joined to another compact form"}
}

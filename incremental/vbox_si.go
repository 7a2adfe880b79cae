package incremental

import "slices"

// V1 at the snapshot-isolation levels (docs/SEMANTICS.md §3, "V1 on
// begin and commit nodes"): Vbox's pruning on the BC-polygraph of
// encode_si.go. The known edges K are the base edges siEdge draws (B_t ->
// C_t of committed t, forced wr edges C_w -> B_r, the session chain, and
// what V1 decides); vboxIndex builds closure.Static over them, on every
// node (begin, commit and session points). Write D(a, b) for "C_a reaches
// C_b in K".
//
//   - V1a: D(a, b) makes the pair the constant "a before b" (C_b -> B_a
//     would close C_b -> B_a -> C_a ~> C_b). Of the decided pairs of a
//     committed a, only those to D-minimal committed writers draw their
//     ww edge C_a -> B_b and their readers' rw edges B_r -> C_b; the rest
//     follow through them (the argument is in SEMANTICS).
//   - V1b: C_a reaching B_r in K, r a forced reader of b's version, makes
//     "a before b" a constant ("b before a" draws B_r -> C_a); its forced
//     readers' rw edges become base edges and join K; repeat (vboxIndex).
//
// Scope: the fast path (vbox is nil otherwise), and levels without real
// time or instances without timestamps (layoutSI creates the state).
// Writers that are not committed in every model (act not constant) are
// paired one by one (orderPairSI), as before, and cover nothing.

// vboxDecideSI is vboxDecide for the begin-commit encoding (V1b): it
// decides pairs of writers whose order a known path into a forced
// reader's snapshot proves, draws the decided pairs' ww edges and their
// forced readers' rw edges now (base edges join K), and returns the pairs
// still open.
func (e *encoder) vboxDecideSI(open [][3]int32, first bool) [][3]int32 {
	v := e.vbox
	x := v.reach
	var next [][3]int32
	try := func(key, a, b int32) {
		if e.siBlindPair(a, b) {
			return // SB (si_dup.go): no order, none to decide
		}
		if _, ok := e.pairs[[2]int32{min(a, b), max(a, b)}]; ok {
			return
		}
		na, nb := int32(e.node[a]), int32(e.node[b])
		if x.Reaches(na, nb) || x.Reaches(nb, na) {
			return // V1a's, in vboxKeySI
		}
		var w, l int32 = -1, -1 // w before l
		switch {
		case e.vboxReachesReaderSI(b, key, a):
			w, l = b, a
		case e.vboxReachesReaderSI(a, key, b):
			w, l = a, b
		default:
			next = append(next, [3]int32{key, a, b})
			return
		}
		v.forced++
		if w < l {
			e.newPairSI(w, l, litTrue)
		} else {
			e.newPairSI(l, w, litFalse)
		}
		via := e.p.orderVia(w, l)
		for _, rd := range v.readers.get(key, w) {
			if rd.rf == litTrue && rd.txn != l && e.node[rd.txn] >= 0 {
				e.siEdge(litTrue, litTrue, e.si.begin[rd.txn], e.node[l], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: w, via: via})
			}
		}
	}
	if !first {
		for _, q := range open {
			try(q[0], q[1], q[2])
		}
		return next
	}
	e.vboxUnorderedPairs(e.siKeyAllBlind, try)
	return next
}

// vboxReachesReaderSI reports a proven known path from C_u to the begin
// node of a reader of w's version of key whose read is forced, other than
// u itself.
func (e *encoder) vboxReachesReaderSI(u, key, w int32) bool {
	x := e.vbox.reach
	cu := int32(e.node[u])
	for _, rd := range e.vbox.readers.get(key, w) {
		if rd.rf == litTrue && rd.txn != u && e.node[rd.txn] >= 0 && x.Reaches(cu, int32(e.si.begin[rd.txn])) {
			return true
		}
	}
	return false
}

// vboxKeySI orders the writers ws of key (registers and lists) with V1a:
// sorted by the index's topological position, a later writer never
// reaches an earlier one; a pair the index does not prove ordered, or
// one with a writer not committed in every model, gets orderPairSI. For
// a committed a, its decided committed successors are visited in order
// and only the D-minimal ones (not reached from an earlier drawn one:
// the cover) get the ww edge C_a -> B_b and the rw edges of a's readers;
// the initial version's readers get rw edges to the D-minimal committed
// writers and to every other writer.
func (e *encoder) vboxKeySI(key int32, ws []int32, readersOf *readerIndex, initReaders []readerRef) {
	v := e.vbox
	byPos, rows, w := e.vboxReachSets(ws)
	cover := slices.Grow(v.cover[:0], w)[:w]
	v.cover = cover
	allBlind := e.siKeyAllBlind(key) // SB (si_dup.go): no pair at all
	for i, a := range byPos {
		if e.stopped() {
			return
		}
		readers := readersOf.get(key, a)
		row := rows[i*w : (i+1)*w]
		clear(cover)
		for j := i + 1; j < len(byPos) && !allBlind; j++ {
			b := byPos[j]
			bit := uint64(1) << (j % 64)
			if e.siBlindPair(a, b) {
				// SB (si_dup.go): no order and no ww edge, and so no
				// cover through b for a (the cover needs C_a -> B_b).
				continue
			}
			if row[j/64]&bit == 0 || e.act[a] != litTrue || e.act[b] != litTrue {
				e.orderPairSI(key, a, b, readersOf)
				continue
			}
			v.decided++
			if cover[j/64]&bit != 0 {
				v.covered += len(readers)
				continue
			}
			if e.pairVarSI(a, b) != litTrue {
				// Decided the other way by V1b: K has a cycle the index
				// was built before; the solver finds it.
				e.orderPairSI(key, a, b, readersOf)
				continue
			}
			for k, word := range rows[j*w : (j+1)*w] {
				cover[k] |= word
			}
			via := e.p.orderVia(a, b)
			for _, rd := range readers {
				if rd.txn != b {
					e.siEdge(rd.rf, litTrue, e.si.begin[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: a, via: via})
				}
			}
		}
	}
	if len(initReaders) == 0 {
		return
	}
	clear(cover)
	for j, b := range byPos {
		bit := uint64(1) << (j % 64)
		if e.act[b] == litTrue {
			if cover[j/64]&bit != 0 {
				v.covered += len(initReaders)
				continue
			}
			for k, word := range rows[j*w : (j+1)*w] {
				cover[k] |= word
			}
		}
		for _, rd := range initReaders {
			if rd.txn != b {
				e.siEdge(rd.rf, litTrue, e.si.begin[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: -1})
			}
		}
	}
}

package online

import "github.com/streamcheck/streamcheck/history"

// logChunkBits sizes the chunks of a txnLog: 4,096 transactions.
const logChunkBits = 12

const logChunkSize = 1 << logChunkBits

// txnLog holds the released transactions by release index, in chunks of
// logChunkSize. One slice of every transaction ever released cost the
// evicting engine twice over on a long stream: each growth copied all of
// it (a twelfth of a step's CPU at 1M), and the stub of every evicted
// transaction stayed in memory for ever. A chunk whose transactions are
// all spilled is dropped; a transaction of a dropped chunk that comes
// back into memory (quarantined, or replayed after an alert) is held
// loose until it is spilled again.
//
// A chunk is also dropped, once it is not the last, when at most looseMax
// of its transactions are still in memory (docs/SEMANTICS.md §5 "Sparse
// log chunks"): those are held loose. A ghost (an evicted writer that is
// still a key's live version) keeps its body in memory for as long as no
// later writer overwrites the key, so a key written rarely held the
// whole chunk of its last writer, 4,096 transactions' worth of memory for
// one body: on the anomaly storm of BENCHMARKS.md nearly every chunk of
// the stream stayed, and memory grew with the stream.
type txnLog struct {
	chunks [][]history.Txn // nil: dropped
	// spilled counts each chunk's spilled transactions; a chunk is dropped
	// when it reaches logChunkSize and is not the last.
	spilled []int32
	loose   map[int]*history.Txn
	n       int
	// keep says which stubs outlive their chunk's drop, held loose: a
	// quarantined transaction's (the taint rule reads its times; its
	// body is in the spill). nil: none.
	keep func(i int) bool
	// inMem says which transactions still have their body in memory (not
	// spilled): a chunk dropped while sparse holds them loose. nil: a
	// chunk is dropped only when all of it is spilled.
	inMem func(i int) bool
}

// looseMax is how many transactions of a chunk may still be in memory
// when it is dropped (held loose: a map entry each, about 200 bytes with
// the copy, against the chunk's array of 4,096 at about 120 bytes each).
const looseMax = logChunkSize / 8

// sparse reports whether chunk c, no longer the last and still held, has
// at most looseMax transactions in memory: dropping it frees its array.
func (l *txnLog) sparse(c int) bool {
	return l.inMem != nil && c < len(l.chunks)-1 && l.chunks[c] != nil && logChunkSize-int(l.spilled[c]) <= looseMax
}

func (l *txnLog) len() int { return l.n }

// at returns transaction i, which must be in memory (not spilled).
func (l *txnLog) at(i int) *history.Txn {
	if c := l.chunks[i>>logChunkBits]; c != nil {
		return &c[i&(logChunkSize-1)]
	}
	if t := l.loose[i]; t != nil {
		return t
	}
	panic("incremental: a spilled transaction's body was read from memory")
}

// inMemory reports whether at(i) holds transaction i (a stub or a body).
func (l *txnLog) inMemory(i int) bool {
	return l.chunks[i>>logChunkBits] != nil || l.loose[i] != nil
}

// append adds t as the next transaction; dropped is the chunk that this
// dropped (all spilled, or sparse, and no longer the last), or -1.
func (l *txnLog) append(t history.Txn) (i, dropped int) {
	i, dropped = l.n, -1
	if i&(logChunkSize-1) == 0 {
		l.chunks = append(l.chunks, make([]history.Txn, logChunkSize))
		l.spilled = append(l.spilled, 0)
		// The chunk before is no longer the last.
		if c := len(l.chunks) - 2; c >= 0 && l.chunks[c] != nil && (l.spilled[c] == logChunkSize || l.sparse(c)) {
			l.dropChunk(c)
			dropped = c
		}
	}
	l.chunks[i>>logChunkBits][i&(logChunkSize-1)] = t
	l.n++
	return i, dropped
}

// last returns the last transaction released; it is never dropped.
func (l *txnLog) last() *history.Txn { return l.at(l.n - 1) }

// put stores t as transaction i, which is in memory again: not spilled.
func (l *txnLog) put(i int, t history.Txn) {
	c := i >> logChunkBits
	if l.chunks[c] != nil {
		l.chunks[c][i&(logChunkSize-1)] = t
		return
	}
	if l.loose == nil {
		l.loose = map[int]*history.Txn{}
	}
	l.loose[i] = &t
}

// markSpilled records that transaction i's body went to the spill; its
// stub is stub, and the chunk is dropped once all of it is spilled, or
// it is sparse: then it returns the chunk, else -1.
func (l *txnLog) markSpilled(i int, stub history.Txn) int {
	c := i >> logChunkBits
	l.spilled[c]++
	if l.chunks[c] == nil {
		if l.keep != nil && l.keep(i) {
			if l.loose == nil {
				l.loose = map[int]*history.Txn{}
			}
			// A copy of its own: taking stub's address would move every
			// call's stub to the heap, kept or not.
			kept := stub
			l.loose[i] = &kept
		} else {
			delete(l.loose, i)
		}
		return -1
	}
	l.chunks[c][i&(logChunkSize-1)] = stub
	if l.spilled[c] == logChunkSize && c != len(l.chunks)-1 || l.sparse(c) {
		l.dropChunk(c)
		return c
	}
	return -1
}

// dropChunk drops chunk c, holding loose the bodies still in memory
// (inMem: a sparse chunk) and the stubs keep names.
func (l *txnLog) dropChunk(c int) {
	for k := range l.chunks[c] {
		i := c<<logChunkBits + k
		if i < l.n && (l.inMem != nil && l.inMem(i) || l.keep != nil && l.keep(i)) {
			if l.loose == nil {
				l.loose = map[int]*history.Txn{}
			}
			t := l.chunks[c][k] // a copy: the chunk's array goes
			l.loose[i] = &t
		}
	}
	l.chunks[c] = nil
}

// markUnspilled records that transaction i's body left the spill; put
// stores it.
func (l *txnLog) markUnspilled(i int) { l.spilled[i>>logChunkBits]-- }

// Accessors of the encoding for the online engine (package online): one
// per field or method it reads, named after it. Written by a generator
// from the names the engine used; add an entry by hand if the engine
// needs another.

package incremental

import (
	"context"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// A is edgeRec's a.
func (x *edgeRec) A() lit { return x.a }

// A is pairVar's a.
func (x *pairVar) A() int32 { return x.a }

// Act is encoder's act.
func (x *encoder) Act() []lit { return x.act }

// At is valueIndex's at.
func (x *valueIndex) At() func(t, i int32) *history.Op { return x.at }

// B is edgeRec's b.
func (x *edgeRec) B() lit { return x.b }

// B is pairVar's b.
func (x *pairVar) B() int32 { return x.b }

// Before is prepared.before.
func (x *prepared) Before(a, b int32) bool { return x.before(a, b) }

// Cands is encoder.cands.
func (x *encoder) Cands(rv *readVar) []int32 { return x.cands(rv) }

// Dropped is ptxn's dropped.
func (x *ptxn) Dropped() bool { return x.dropped }

// EncodeCtx is encoder.encodeCtx.
func (x *encoder) EncodeCtx(ctx context.Context) { x.encodeCtx(ctx) }

// FinalValue is ptxn.finalValue.
func (x *ptxn) FinalValue(k int32) (history.Value, bool) { return x.finalValue(k) }

// Finals is ptxn's finals.
func (x *ptxn) Finals() []keyVal { return x.finals }

// G is coreFinder's g.
func (x *coreFinder) G() *encoder { return x.g }

// G is readVar's g.
func (x *readVar) G() lit { return x.g }

// History is prepared's h.
func (x *prepared) History() *history.History { return x.h }

// History is vSlot's h.
func (x *vSlot) History() uint64 { return x.h }

// IsList is pread.isList.
func (x *pread) IsList() bool { return x.isList() }

// Kept is encodeConfig's kept.
func (x *encodeConfig) Kept() [][2]int32 { return x.kept }

// Kept is encoder's kept.
func (x *encoder) Kept() [][2]int32 { return x.kept }

// Key is edgeRec's key.
func (x *edgeRec) Key() int32 { return x.key }

// Key is internalAnomaly's key.
func (x *internalAnomaly) Key() int32 { return x.key }

// Key is keyList's key.
func (x *keyList) Key() int32 { return x.key }

// Key is keyVal's key.
func (x *keyVal) Key() int32 { return x.key }

// Key is pread's key.
func (x *pread) Key() int32 { return x.key }

// Key is readerEntry's key.
func (x *readerEntry) Key() int32 { return x.key }

// KeyIndex is prepared's keyIndex.
func (x *prepared) KeyIndex() map[history.Value]int32 { return x.keyIndex }

// Keys is prepared's keys.
func (x *prepared) Keys() []history.Value { return x.keys }

// Keys is pruner's keys.
func (x *pruner) Keys() []rtWriters { return x.keys }

// Keys is valueIndex's keys.
func (x *valueIndex) Keys() *[]history.Value { return x.keys }

// N is readVar's n.
func (x *readVar) N() int32 { return x.n }

// Node is encoder's node.
func (x *encoder) Node() []solver.Node { return x.node }

// NodeTxn is encoder's nodeTxn.
func (x *encoder) NodeTxn() []int32 { return x.nodeTxn }

// Not is lit.not.
func (x lit) Not() lit { return x.not() }

// OpKeys is prepBufs's opKeys.
func (x *prepBufs) OpKeys() []int32 { return x.opKeys }

// OpKeys is prepared's opKeys.
func (x *prepared) OpKeys() []int32 { return x.opKeys }

// Opts is prepared's opts.
func (x *prepared) Opts() *history.Options { return &x.opts }

// Pairs is encoder's pairs.
func (x *encoder) Pairs() map[[2]int32]*pairVar { return x.pairs }

// PairsL is encoder's pairsL.
func (x *encoder) PairsL() []*pairVar { return x.pairsL }

// Project is prepared.project.
func (x *prepared) Project(in []bool) *history.History { return x.project(in) }

// Pruned is encoder's pruned.
func (x *encoder) Pruned() int { return x.pruned }

// Read is readVar's read.
func (x *readVar) Read() int32 { return x.read }

// Reads is encoder's reads.
func (x *encoder) Reads() []readVar { return x.reads }

// Reads is ptxn's reads.
func (x *ptxn) Reads() []pread { return x.reads }

// RealTimeBefore is prepared.realTimeBefore.
func (x *prepared) RealTimeBefore(a, b int32) bool { return x.realTimeBefore(a, b) }

// Rfs is encoder.rfs.
func (x *encoder) Rfs(rv *readVar) []lit { return x.rfs(rv) }

// SessionMembers is prepared's sessionMembers.
func (x *prepared) SessionMembers() [][]int32 { return x.sessionMembers }

// SessionOf is prepared's sessionOf.
func (x *prepared) SessionOf() []int32 { return x.sessionOf }

// SessionRank is prepared's sessionRank.
func (x *prepared) SessionRank() []int32 { return x.sessionRank }

// Shrink is coreFinder.shrink.
func (x *coreFinder) Shrink(ctx context.Context, core []int32) ([]int32, error) {
	return x.shrink(ctx, core)
}

// Solve is encoder.solve.
func (x *encoder) Solve(ctx context.Context, assumptions ...solver.Lit) solver.Status {
	return x.solve(ctx, assumptions...)
}

// Solver is encoder's s.
func (x *encoder) Solver() *solver.Solver { return x.s }

// Txn is internalAnomaly's txn.
func (x *internalAnomaly) Txn() int32 { return x.txn }

// Txn is readVar's txn.
func (x *readVar) Txn() int32 { return x.txn }

// Txn is readerRef's txn.
func (x *readerRef) Txn() int32 { return x.txn }

// Txn is vEntry's txn.
func (x *vEntry) Txn() int32 { return x.txn }

// Txns is prepared's txns.
func (x *prepared) Txns() []ptxn { return x.txns }

// Val is edgeRec's val.
func (x *edgeRec) Val() string { return x.val }

// Val is keyVal's val.
func (x *keyVal) Val() history.Value { return x.val }

// Val is pread's val.
func (x *pread) Val() history.Value { return x.val }

// Val is readerRef's val.
func (x *readerRef) Val() history.Value { return x.val }

// ValueWriters is prepared's valueWriters.
func (x *prepared) ValueWriters() *valueIndex { return &x.valueWriters }

// WritersOf is prepared's writersOf.
func (x *prepared) WritersOf() [][]int32 { return x.writersOf }

// X is pairVar's x.
func (x *pairVar) X() lit { return x.x }

// Sel is encoder's sel: each transaction's selector in a guarded
// encoding.
func (x *encoder) Sel() []lit { return x.sel }

// Check is coreFinder.check: decides the projection to members.
func (x *coreFinder) Check(ctx context.Context, members []bool) solver.Status {
	return x.check(ctx, members)
}

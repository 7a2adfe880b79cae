package sionline

import "github.com/streamcheck/streamcheck/history"

// externalRead says whether ops[j], a read, sees the state at its
// transaction's snapshot (docs/SEMANTICS.md §5 "A list read after its
// own appends reads the snapshot too (si32)"): the first op on its key,
// or a list read that only the transaction's own appends to the key
// precede, which sees the snapshot's list with those appends after it.
// A read after the transaction's own write of a register (or after its
// own read of the key, which saw the snapshot already) is not one.
func externalRead(ops []history.Op, j int, fs firsts) bool {
	if fs.first(j) {
		return true
	}
	if !ops[j].IsList {
		return false
	}
	for _, q := range ops[:j] {
		if q.Key == ops[j].Key && q.Kind != history.Append {
			return false
		}
	}
	return true
}

// NoWriterOrder leaves out sealedPrefixes' third kind of interval, as
// before docs/SEMANTICS.md §5 "A version order the chunks keep (si32)"
// (the tests compare).
var NoWriterOrder = false

package gen

import "github.com/streamcheck/streamcheck/history"

// Shapes for the weak levels (issue 26): each is valid at its level and
// invalid at every checked level strictly stronger (allowedShapes). The
// three transactions or four of each shape sit in sessions of their own,
// so session order adds nothing.
const (
	// FracturedReadShape: R sees W's x but the initial y, which W also
	// wrote. Read committed allows it; read atomic does not (W wr-> R and W
	// writes y), nor does serializable (read skew, G-single).
	FracturedReadShape = history.FracturedRead
	// CausalityViolationShape: W2 read W1's x before writing y; R reads W2's
	// y and still the initial x. Read atomic allows it (R's direct
	// predecessor W2 does not write x); causal does not (W1 is in R's
	// causal past), nor does serializable.
	CausalityViolationShape = history.CausalityViolation
	// LongForkShape: two writers of different keys, two readers that see
	// them in opposite orders. Causal allows it; serializable (and
	// snapshot isolation) does not.
	LongForkShape = "long-fork"
)

// weakShapes builds a weak-level shape; false for any other type.
func weakShape(b *builder, typ string) bool {
	x, y := b.key("x"), b.key("y")
	switch typ {
	case FracturedReadShape:
		b.txn(ok, w(x, v1), w(y, v1))
		b.txn(ok, r(x, v1), r(y, null))
	case CausalityViolationShape:
		b.txn(ok, w(x, v1))
		b.txn(ok, r(x, v1), w(y, v1))
		b.txn(ok, r(y, v1), r(x, null))
	case LongForkShape:
		b.txn(ok, w(x, v1))
		b.txn(ok, w(y, v1))
		b.txn(ok, r(x, v1), r(y, null))
		b.txn(ok, r(y, v1), r(x, null))
	default:
		return false
	}
	return true
}

// isWeakShape reports whether typ is one of weakShape's.
func isWeakShape(typ string) bool {
	return typ == FracturedReadShape || typ == CausalityViolationShape || typ == LongForkShape
}

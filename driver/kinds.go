package driver

import (
	"github.com/streamcheck/streamcheck/history"
)

// noteKinds records what t uses its keys as; if t uses a key as a list
// and as a register (against an earlier event or within itself), it
// records nothing and returns the input error check gives for the same
// history.
//
// State.Kinds is the record; d.kinds (internal/keycache) answers most lookups before it
// (docs/SEMANTICS.md §5 "The key kinds' cache (issue 29)"): a key seen before is
// usually the very string the decoder interned for it, and the cache
// finds it by its address instead of hashing its text.
func (d *Driver) noteKinds(t *history.Txn) error {
	if d.st.Kinds == nil {
		d.st.Kinds = map[history.Key]bool{}
	}
	added := d.kindScratch[:0]
	for i := range t.Ops {
		op := &t.Ops[i]
		var list bool
		switch {
		case op.Kind == history.Append || (op.Kind == history.Read && op.IsList):
			list = true
		case op.Kind == history.Write:
		default:
			continue // not decided (history.Op.KeyKind)
		}
		prev, ok := d.kinds.Get(op.Key)
		if !ok {
			prev, ok = d.st.Kinds[op.Key]
			if ok {
				d.kinds.Put(op.Key, prev, len(d.st.Kinds))
			}
		}
		if ok {
			if prev != list {
				// Undo this event's first uses: it is set aside whole.
				for _, k := range added {
					delete(d.st.Kinds, k)
				}
				// A key this event added and then used again entered
				// the cache: it goes with them (the cache holds only
				// what Kinds holds). Clearing it all costs nothing
				// that matters at an input error.
				d.kinds.Reset()
				d.kindScratch = added[:0]
				return history.KindClash(t, op.Key, "")
			}
			continue
		}
		d.st.Kinds[op.Key] = list
		added = append(added, op.Key)
	}
	d.kindScratch = added[:0]
	return nil
}

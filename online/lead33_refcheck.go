package online

import (
	"fmt"
	"math"

	"github.com/streamcheck/streamcheck/history"
)

// checkGhostRefs compares every byKey entry's copies (ghostRef: the end
// B3 bounds by, the final value F1 compares) with the ghost's body, read
// here directly rather than through refOf (selfCheck). checkGhostIndex
// rebuilds the index with refOf itself, so a wrong copy made by refOf
// would be rebuilt the same and pass; this check derives each copy from
// the body's fields alone, as §5 "The ghost index carries what the bypass
// reads" states them: the end when the ghost is committed with a time,
// else +∞, and the value of its last write of the key.
func (o *Online) checkGhostRefs() error {
	gx := &o.ev.gx
	if !gx.built {
		return nil
	}
	for k, refs := range gx.byKey {
		for _, h := range refs {
			t := o.log.at(h.g)
			end := int64(math.MaxInt64)
			if t.Status == history.Committed && t.HasTime {
				end = t.End
			}
			var val history.Value
			wrote := false
			for j := len(t.Ops) - 1; j >= 0; j-- {
				if op := t.Ops[j]; op.Kind == history.Write && op.Key == k {
					val, wrote = op.Value, true
					break
				}
			}
			if h.end != end || h.val != val || h.wrote != wrote {
				return fmt.Errorf("engine self-check: ghost %d's entry for key %q holds end %d, value %q (wrote %v); its body says %d, %q (%v)",
					h.g, k, h.end, h.val, h.wrote, end, val, wrote)
			}
		}
	}
	return nil
}

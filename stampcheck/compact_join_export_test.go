package stampcheck

import (
	"fmt"
	"reflect"
	"slices"
)

// CompactDiff says how a and b differ in what a check reads of them ("":
// they do not): every transaction's head and stamps, each op's dense key,
// kind and value or list of value ids, the keys' kinds, the sessions in
// id order, the ids' text, ends and hashes, and the refusal. Where the
// ops and lists sit in their chunks is not compared (Join starts p's
// chunks anew where one pass would fill c's last ones).
func CompactDiff(a, b *Compact) string {
	if a.not != b.not || a.facts != b.facts || a.need != b.need || a.nkeys != b.nkeys {
		return fmt.Sprintf("not %q/%q facts %v/%v need %v/%v keys %d/%d", a.not, b.not, a.facts, b.facts, a.need, b.need, a.nkeys, b.nkeys)
	}
	if a.not != "" {
		return ""
	}
	if len(a.txns) != len(b.txns) {
		return fmt.Sprintf("%d/%d transactions", len(a.txns), len(b.txns))
	}
	for i := range a.txns {
		ta, tb := a.txns[i], b.txns[i]
		ta.opChunk, ta.opLo, tb.opChunk, tb.opLo = 0, 0, 0, 0
		if ta != tb {
			return fmt.Sprintf("transaction %d: %+v / %+v", i, ta, tb)
		}
		oa, ob := a.opsOf(int32(i)), b.opsOf(int32(i))
		for n := range oa {
			x, y := oa[n], ob[n]
			if x.key() != y.key() || x.kind() != y.kind() || x.isList() != y.isList() {
				return fmt.Sprintf("transaction %d op %d: %+v / %+v", i, n, x, y)
			}
			if x.isList() && !slices.Equal(a.listAt(x.val), b.listAt(y.val)) || !x.isList() && x.val != y.val {
				return fmt.Sprintf("transaction %d op %d: values differ", i, n)
			}
		}
	}
	if !slices.Equal(a.keyKinds(), b.keyKinds()) {
		return "key kinds differ"
	}
	if !reflect.DeepEqual(a.sessions.Keys(), b.sessions.Keys()) {
		return fmt.Sprintf("sessions %v / %v", a.sessions.Keys(), b.sessions.Keys())
	}
	if string(a.ids.text) != string(b.ids.text) || !slices.Equal(a.ids.end, b.ids.end) {
		return "ids differ"
	}
	if a.ids.seed == b.ids.seed && !slices.Equal(a.ids.hash, b.ids.hash) {
		return "id hashes differ"
	}
	return ""
}

// SameSeed is an empty form that hashes ids as c does, with arrays of
// its own (a Part without its placement): the one-pass form the tests
// compare a joined one with.
func SameSeed(c *Compact) *Compact {
	p := c.Part(0)
	p.place = nil
	return p
}

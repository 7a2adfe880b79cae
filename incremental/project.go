package incremental

import (
	"github.com/streamcheck/streamcheck/history"
)

// Project returns H|C, the projection of docs/SEMANTICS.md §3: the members'
// transactions, each keeping a read iff it follows the transaction's own
// write of that key (internal), or every possible writer of its value is a
// member, or it has no possible writer at all (a garbage read).
func Project(h *history.History, opts history.Options, members []string) *history.History {
	p := prepare(h, opts)
	in := make([]bool, len(h.Txns))
	idx := make(map[string]int, len(h.Txns))
	for i := range h.Txns {
		idx[h.Txns[i].ID] = i
	}
	for _, id := range members {
		if i, ok := idx[id]; ok {
			in[i] = true
		}
	}
	return p.project(in)
}

func (p *prepared) project(in []bool) *history.History {
	h := p.h
	out := &history.History{}
	for ti := range h.Txns {
		if !in[ti] {
			continue
		}
		t := h.Txns[ti]
		ops := make([]history.Op, 0, len(t.Ops))
		wrote := map[history.Value]bool{}
		for _, op := range t.Ops {
			if op.Kind != history.Read {
				wrote[op.Key] = true
				ops = append(ops, op)
				continue
			}
			// A register read after the transaction's own write is decided
			// inside it; a list read still shows other appenders' elements.
			if (wrote[op.Key] && !p.isListKey(op.Key)) || p.readKept(int32(ti), op, in) {
				ops = append(ops, op)
			}
		}
		t.Ops = ops
		out.Txns = append(out.Txns, t)
	}
	return out
}

// readKept applies the projection to an external read.
func (p *prepared) readKept(t int32, op history.Op, in []bool) bool {
	k, ok := p.keyIndex[op.Key]
	if !ok {
		return true
	}
	r := pread{key: k, val: op.Value}
	if p.isList[k] {
		r.lr = &listRead{full: op.List}
		if !op.IsList && op.Value != history.Null {
			r.lr.full = []history.Value{"scalar:" + op.Value}
		}
	}
	ws, _ := p.possibleWriters(t, &r)
	for _, w := range ws {
		if !in[w] {
			return false
		}
	}
	return true
}

func (p *prepared) isListKey(k history.Value) bool {
	i, ok := p.keyIndex[k]
	return ok && p.isList[i]
}

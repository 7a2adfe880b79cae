package stampcheck

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// stream is the stamps' common path (docs/SEMANTICS.md §10 "The snapshot
// levels with facts"): one pass over the begin and commit events in
// stamp order (stampEvents' order: a begin before a commit on an equal
// stamp), keeping per key only the latest committed writer, its register
// value and the committed appends. At a begin every read of the
// transaction is replayed against that state with its own writes on top,
// which is the state its snapshot holds, since exactly the commits with a
// smaller stamp have been applied; at a commit first committer wins is
// checked against the key's latest writer (stamps increase along a key's
// writers, so the latest is the only one to ask) and the writes are
// applied. It reports whether every check passed: then the per-key
// chains are never built. On any failure the caller runs the chain path,
// which finds the same failure and names it; stream decides nothing on
// its own but "every read and every first-committer pair holds".
//
// Cost: O(ops) after the two sorts, with per-key arrays indexed by key id
// and no map; in stamp order a transaction's begin and commit are usually
// close, so its operations are read twice while in cache.
func (a *analysis) stream(h *history.History, opts history.Options) bool {
	nk := len(a.name)
	last := make([]int32, nk) // latest committed writer, -1: none
	for k := range last {
		last[k] = -1
	}
	val := make([]history.Value, nk) // its register value
	for k := range val {
		val[k] = history.Null
	}
	var apps [][]history.Value // committed appends, list keys only
	if slices.Contains(a.list, true) {
		apps = make([][]history.Value, nk)
	}
	unknownInit := opts.InitialState == history.InitialUnknown
	var bound []bool // the unknown initial value of the key is bound
	var initReg []history.Value
	var initList [][]history.Value
	if unknownInit {
		bound, initReg, initList = make([]bool, nk), make([]history.Value, nk), make([][]history.Value, nk)
	}
	var own ownWrites
	var buf []history.Value // own appends of one transaction, reused
	begin := func(ti int32) bool {
		own, buf = own[:0], buf[:0]
		for n, op := range h.Txns[ti].Ops {
			k := a.kx.of(ti, n)
			switch op.Kind {
			case history.Write:
				if w := own.find(k); w != nil {
					w.reg, w.val = true, op.Value
				} else {
					own = append(own, ownWrite{k: k, reg: true, val: op.Value})
				}
				continue
			case history.Append:
				if w := own.find(k); w != nil {
					w.apps = append(w.apps, op.Value)
				} else {
					// A slice of buf per key: appends of one key are
					// rarely interleaved with another's, and when they
					// are append copies out.
					at := len(buf)
					buf = append(buf, op.Value)
					own = append(own, ownWrite{k: k, apps: buf[at : at+1 : at+1]})
				}
				continue
			}
			mine := own.find(k)
			if a.list[k] {
				if !op.IsList && op.Value != history.Null {
					return false
				}
				var tail []history.Value
				if mine != nil {
					tail = mine.apps
				}
				snap := apps[k]
				got := op.List
				switch {
				case !unknownInit:
					if !equalConcat(got, nil, snap, tail) {
						return false
					}
				case bound[k]:
					if !equalConcat(got, initList[k], snap, tail) {
						return false
					}
				default:
					n := len(snap) + len(tail)
					if len(got) < n || !equalConcat(got[len(got)-n:], nil, snap, tail) {
						return false
					}
					initList[k], bound[k] = slices.Clone(got[:len(got)-n]), true
				}
				continue
			}
			switch {
			case mine != nil && mine.reg:
				if op.Value != mine.val {
					return false
				}
			case last[k] >= 0 || !unknownInit:
				if op.Value != val[k] {
					return false
				}
			case bound[k]:
				if op.Value != initReg[k] {
					return false
				}
			default:
				initReg[k], bound[k] = op.Value, true
			}
		}
		return true
	}
	commit := func(ti int32) bool {
		f := &h.Facts[ti]
		for n, op := range h.Txns[ti].Ops {
			if op.Kind == history.Read {
				continue
			}
			k := a.kx.of(ti, n)
			if p := last[k]; p != ti {
				if p >= 0 && h.Facts[p].CommitTS >= f.StartTS {
					return false // first committer wins
				}
				last[k] = ti
			}
			if op.Kind == history.Write {
				val[k] = op.Value
			} else {
				apps[k] = append(apps[k], op.Value)
			}
		}
		return true
	}
	b := 0
	for _, c := range a.byCommit {
		cts := h.Facts[c].CommitTS
		for b < len(a.byStart) && h.Facts[a.byStart[b]].StartTS <= cts {
			if !begin(a.byStart[b]) {
				return false
			}
			b++
		}
		if !commit(c) {
			return false
		}
	}
	return true
}

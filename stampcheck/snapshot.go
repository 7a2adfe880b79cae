package stampcheck

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// SnapshotRules are the orders a snapshot level adds to plain snapshot
// isolation: strong session SI wants each transaction's snapshot to hold
// its session's earlier transactions, strong SI every transaction that
// finished before it began (widened by Δ). Checkers of the snapshot
// family pass their level's orders here.
type SnapshotRules struct {
	Session  bool
	RealTime bool
	_        struct{}
}

// mode is which facts a check reads.
type mode uint8

const (
	stamps mode = iota // commit_ts and start_ts
	pgSnap             // xid and snapshot
)

// analysis is what a snapshot check derives from the facts: per key the
// committed writers in version order, and each external read's source.
type analysis struct {
	mode   mode
	chains map[history.Key][]int32
	// src[t][n] is the writer whose version read n of txn t saw (-1: the
	// initial version); only for committed readers and external reads.
	src map[int32]map[int]int32
}

// sees reports whether reader t's snapshot holds committed writer w.
func (a *analysis) sees(h *history.History, t, w int32) bool {
	if t == w {
		return false
	}
	ft, fw := &h.Facts[t], &h.Facts[w]
	if a.mode == stamps {
		return fw.CommitTS < ft.StartTS
	}
	return ft.Snap.Sees(fw.Xid)
}

// CheckSnapshot checks snapshot isolation with the facts: each read of a
// committed transaction sees the state its snapshot holds (commit_ts
// below its start_ts, or PostgreSQL's xid visibility), its own writes on
// top; the committed writers of a key are totally ordered by visibility
// (first committer wins); the rules' orders hold. Witnessed means the
// history is valid at snapshot isolation (with those rules) and
// consistent with its facts; Order is then the commit order (stamps) or
// nil (PostgreSQL, whose facts give visibility, not an order).
func CheckSnapshot(h *history.History, opts history.Options, rules SnapshotRules) Fast {
	f, _ := analyze(h, opts, rules)
	return f
}

func analyze(h *history.History, opts history.Options, rules SnapshotRules) (Fast, *analysis) {
	if h.Facts == nil {
		return Fast{Outcome: Open, Why: "the history carries no database facts"}, nil
	}
	var committed []int32
	unknownWriter := ""
	allStamps, allPG := true, true
	for i := range h.Txns {
		t, f := &h.Txns[i], &h.Facts[i]
		switch t.Status {
		case history.Aborted:
			continue
		case history.Unknown:
			if unknownWriter == "" && t.Writes() {
				unknownWriter = t.ID
			}
			continue // tried as not committed, as in CheckSerial
		}
		allStamps = allStamps && f.Has&(history.HasCommitTS|history.HasStartTS) == history.HasCommitTS|history.HasStartTS
		allPG = allPG && f.Has&(history.HasXid|history.HasSnapshot) == history.HasXid|history.HasSnapshot
		committed = append(committed, int32(i))
	}
	a := &analysis{chains: map[history.Key][]int32{}, src: map[int32]map[int]int32{}}
	switch {
	case allStamps:
		a.mode = stamps
	case allPG:
		a.mode = pgSnap
		if rules.RealTime {
			return Fast{Outcome: Open, Why: "PostgreSQL's snapshots give no commit order to hold real time against"}, nil
		}
	default:
		return Fast{Outcome: Open, Why: "some committed transaction lacks a snapshot fact (start_ts and commit_ts, or xid and snapshot)"}, nil
	}
	// Per key, the committed writers in version order.
	for _, i := range committed {
		t := &h.Txns[i]
		for n, op := range t.Ops {
			if op.Kind == history.Read || slices.ContainsFunc(t.Ops[:n], func(o history.Op) bool { return o.Kind != history.Read && o.Key == op.Key }) {
				continue
			}
			a.chains[op.Key] = append(a.chains[op.Key], i)
		}
	}
	keys := make([]history.Key, 0, len(a.chains))
	for k := range a.chains {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic reports
	for _, k := range keys {
		ch := a.chains[k]
		if a.mode == stamps {
			slices.SortFunc(ch, func(x, y int32) int {
				return cmp.Or(cmp.Compare(h.Facts[x].CommitTS, h.Facts[y].CommitTS), cmp.Compare(x, y))
			})
			// First committer wins: each writer's snapshot holds the one
			// before it. Consecutive pairs suffice: c_i < s_{i+1} <=
			// c_{i+1} makes commit stamps strictly increase along the
			// chain, so every earlier writer is below s_{i+1} too.
			for p := 1; p < len(ch); p++ {
				if !a.sees(h, ch[p], ch[p-1]) {
					return fcw(h, k, ch[p-1], ch[p]), nil
				}
			}
			continue
		}
		sort.SliceStable(ch, func(x, y int) bool { return a.sees(h, ch[y], ch[x]) })
		// Snapshots give no order to trust: every pair is compared.
		for p := range ch {
			for q := p + 1; q < len(ch); q++ {
				if !a.sees(h, ch[q], ch[p]) || a.sees(h, ch[p], ch[q]) {
					return fcw(h, k, ch[p], ch[q]), nil
				}
			}
		}
	}
	if fr := checkRules(h, opts, rules, a, committed); fr != nil {
		return *fr, nil
	}
	if m := a.reads(h, opts, committed); m != nil {
		if unknownWriter != "" {
			return Fast{Outcome: Open, Why: fmt.Sprintf("%s (txn %s is unknown and writes: it may have committed)", m.why, unknownWriter)}, nil
		}
		return Fast{Outcome: Contradicted, Why: m.why, Seed: m.seed}, nil
	}
	var order []int32
	if a.mode == stamps {
		order = slices.Clone(committed)
		slices.SortFunc(order, func(x, y int32) int {
			return cmp.Or(cmp.Compare(h.Facts[x].CommitTS, h.Facts[y].CommitTS), cmp.Compare(x, y))
		})
	}
	return Fast{Outcome: Witnessed, Order: order}, a
}

func fcw(h *history.History, k history.Key, x, y int32) Fast {
	return Fast{Outcome: Contradicted, Why: fmt.Sprintf("txns %s and %s both write %s and their snapshots do not order them (first committer wins)", h.Txns[x].ID, h.Txns[y].ID, k), Seed: []int32{min(x, y), max(x, y)}}
}

// checkRules holds the strong variants' orders: an earlier transaction of
// the session, or one that finished before in widened real time, is in
// the snapshot.
func checkRules(h *history.History, opts history.Options, rules SnapshotRules, a *analysis, committed []int32) *Fast {
	isCommitted := make(map[int32]bool, len(committed))
	for _, i := range committed {
		isCommitted[i] = true
	}
	if rules.Session {
		for _, s := range sessions(h) {
			var earlier []int32
			for _, i := range s {
				if !isCommitted[i] {
					continue
				}
				// Commit stamps are transitive (c_a < s_b <= c_b < s_c),
				// so the previous member suffices; snapshots are not, and
				// every earlier member is asked.
				from := 0
				if a.mode == stamps {
					from = max(0, len(earlier)-1)
				}
				for _, prev := range earlier[from:] {
					if !a.sees(h, i, prev) {
						return &Fast{Outcome: Contradicted, Why: fmt.Sprintf("txn %s's snapshot misses %s, earlier in its session", h.Txns[i].ID, h.Txns[prev].ID), Seed: []int32{min(prev, i), max(prev, i)}}
					}
				}
				earlier = append(earlier, i)
			}
		}
	}
	if rules.RealTime && a.mode == stamps {
		byEnd := slices.Clone(committed)
		slices.SortFunc(byEnd, func(x, y int32) int { return cmp.Compare(opts.EffectiveEnd(&h.Txns[x]), opts.EffectiveEnd(&h.Txns[y])) })
		byStart := slices.Clone(committed)
		slices.SortFunc(byStart, func(x, y int32) int { return cmp.Compare(h.Txns[x].Start, h.Txns[y].Start) })
		var top int32 = -1 // the greatest commit stamp among those ended
		p := 0
		for _, b := range byStart {
			tb := &h.Txns[b]
			for p < len(byEnd) && endsBefore(opts, &h.Txns[byEnd[p]], tb) {
				if top < 0 || h.Facts[byEnd[p]].CommitTS > h.Facts[top].CommitTS {
					top = byEnd[p]
				}
				p++
			}
			if top >= 0 && top != b && !a.sees(h, b, top) && opts.Precedes(&h.Txns[top], tb) {
				return &Fast{Outcome: Contradicted, Why: fmt.Sprintf("txn %s's snapshot misses %s, which finished before it began", tb.ID, h.Txns[top].ID), Seed: []int32{min(top, b), max(top, b)}}
			}
			if top >= 0 && top != b && !a.sees(h, b, top) {
				// The two zero-length transactions at one instant that
				// Options.Precedes calls concurrent: rare, and not worth
				// a second structure; the search decides.
				return &Fast{Outcome: Open, Why: "zero-length transactions at one instant"}
			}
		}
	}
	return nil
}

// endsBefore is one direction of Options.Precedes: a's widened end is at
// or before b's widened start.
func endsBefore(opts history.Options, a, b *history.Txn) bool {
	ea := opts.EffectiveEnd(a)
	return ea <= b.Start-2*opts.Skew && ea+opts.Skew <= b.Start-opts.Skew
}

// reads replays every committed transaction's reads against its snapshot.
func (a *analysis) reads(h *history.History, opts history.Options, committed []int32) *mismatch {
	lists := h.ListKeys()
	unknownInit := opts.InitialState == history.InitialUnknown
	initReg := map[history.Key]history.Value{}
	initList := map[history.Key][]history.Value{}
	binder := map[history.Key]int32{}
	// final[k][w]: w's last write of register k; appends[k][w]: w's
	// appends to list k, in order.
	final := func(w int32, k history.Key) history.Value {
		v := history.Null
		for _, op := range h.Txns[w].Ops {
			if op.Kind == history.Write && op.Key == k {
				v = op.Value
			}
		}
		return v
	}
	var wix *writerIndex
	for _, ti := range committed {
		t := &h.Txns[ti]
		own := map[history.Key]history.Value{}
		ownList := map[history.Key][]history.Value{}
		for n, op := range t.Ops {
			switch op.Kind {
			case history.Write:
				own[op.Key] = op.Value
				continue
			case history.Append:
				ownList[op.Key] = append(ownList[op.Key], op.Value)
				continue
			}
			k := op.Key
			ch := a.chains[k]
			last := -1 // position in ch of the version seen
			if a.mode == stamps {
				s := h.Facts[ti].StartTS
				last = sort.Search(len(ch), func(p int) bool { return h.Facts[ch[p]].CommitTS >= s }) - 1
			} else {
				for p := len(ch) - 1; p >= 0; p-- {
					if a.sees(h, ti, ch[p]) {
						last = p
						break
					}
				}
				// The versions a snapshot sees are a prefix of the
				// version order: seeing a version and not one it
				// overwrote is no state the database ever held.
				for p := 0; p < last; p++ {
					if !a.sees(h, ti, ch[p]) {
						return &mismatch{
							why:  fmt.Sprintf("txn %s's snapshot sees %s's version of %s but not %s's, which it overwrote", t.ID, h.Txns[ch[last]].ID, k, h.Txns[ch[p]].ID),
							seed: dedup([]int32{ti, ch[p], ch[last]}),
						}
					}
				}
			}
			ok, internal := true, false
			var want string
			if lists[k] {
				var snap []value
				for _, w := range ch[:last+1] {
					for _, o := range h.Txns[w].Ops {
						if o.Kind == history.Append && o.Key == k {
							snap = append(snap, o.Value)
						}
					}
				}
				got := op.List
				if !op.IsList && op.Value != history.Null {
					ok = false
				} else {
					tail := append(snap, ownList[k]...)
					switch init, bound := initList[k]; {
					case !unknownInit:
						ok = slices.Equal(got, tail)
					case bound:
						ok = slices.Equal(got, append(slices.Clone(init), tail...))
					default:
						ok = len(got) >= len(tail) && slices.Equal(got[len(got)-len(tail):], tail)
						if ok {
							initList[k], binder[k] = slices.Clone(got[:len(got)-len(tail)]), ti
						}
					}
					want = fmt.Sprint(tail)
				}
			} else if v, wrote := own[k]; wrote {
				ok, internal, want = op.Value == v, true, string(v)
			} else if last >= 0 {
				v := final(ch[last], k)
				ok, want = op.Value == v, string(v)
			} else if !unknownInit {
				ok, want = op.Value == history.Null, "null"
			} else if v, bound := initReg[k]; bound {
				ok, want = op.Value == v, string(v)
			} else {
				initReg[k], binder[k] = op.Value, ti
			}
			if ok {
				if !internal {
					m := a.src[ti]
					if m == nil {
						m = map[int]int32{}
						a.src[ti] = m
					}
					m[n] = -1
					if last >= 0 {
						m[n] = ch[last]
					}
				}
				continue
			}
			if wix == nil {
				wix = newWriterIndex(h)
			}
			seed := []int32{ti}
			if !internal {
				seed = append(seed, ch[:last+1]...)
				if last >= 0 && !lists[k] {
					seed = append(seed[:1], ch[last])
				}
				if b, ok := binder[k]; ok {
					seed = append(seed, b)
					seed = append(seed, wix.possible(&h.Txns[b], k)...)
				}
				seed = append(seed, wix.writersOf(op)...)
			}
			return &mismatch{
				why:  fmt.Sprintf("txn %s op %d (%s) reads %s where its snapshot holds %s", t.ID, n, op, readText(op), want),
				seed: dedup(seed),
			}
		}
	}
	return nil
}

type value = history.Value

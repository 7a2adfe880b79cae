package oracle

import (
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// The snapshot-isolation family, from its definition (docs/SEMANTICS.md
// §1; Viper §2.2; Adya §4.3): a history satisfies a level of the family
// iff, for some subset of the unknown transactions taken as committed,
// some sequence of begin and commit events of the committed and taken
// transactions, each begin before its commit, satisfies
//
//   - snapshot reads: replaying t's operations at its begin, on the
//     versions committed before it with t's own writes visible,
//     reproduces every read of t;
//   - first committer wins: no two transactions that write a common key
//     overlap (neither commits between the other's begin and commit);
//   - the level's orders: C_i before B_j for i before j in session order
//     (strong session SI, strong SI); for i before j in widened real time,
//     C_i before C_j (GSI) or C_i before B_j (strong SI).
//
// A transaction's writes are installed at its commit. Under first
// committer wins nobody else writes its keys between its begin and its
// commit, so installing its final register values and appending its
// appends to the current lists is the same as installing what it built
// on its snapshot.
//
// The search places events one at a time, replays as it goes and
// remembers failed (begun, committed, state) triples, as Check does for
// serial orders. A witness is the event sequence, "begin ID" and
// "commit ID".

// siSearch is one brute-force run over begin and commit events.
type siSearch struct {
	*search
	hist *history.History
	// beforeBegin[j] and beforeCommit[j]: candidates whose commit must
	// precede j's begin, j's commit.
	beforeBegin, beforeCommit []uint
	// conflict[j]: candidates that write a key j writes.
	conflict []uint
	// afterBegin[j]: candidates that must begin before j commits (the
	// database's facts only, si_stamps.go; nil otherwise).
	afterBegin []uint
	// finals and appends are each candidate's effects at its commit.
	finals  [][][2]int // (key, value) of the last write of each register key
	appends [][][2]int // (key, element) of each append, in order

	events []string
	failed map[string]bool
}

func checkSI(h *history.History, opts history.Options) (bool, []string, error) {
	return checkSIWith(h, opts, nil)
}

// checkSIWith is checkSI with extra constraints: extra, when not nil,
// adds to the search's order masks before it runs (si_stamps.go).
func checkSIWith(h *history.History, opts history.Options, extra func(*siSearch)) (bool, []string, error) {
	s := &siSearch{search: newSearch(h, opts), hist: h}
	if len(s.cand) > MaxTxns {
		return false, nil, fmt.Errorf("%w: %d candidate transactions (max %d)", ErrTooLarge, len(s.cand), MaxTxns)
	}
	n := len(s.cand)
	rank := sessionRanks(h)
	s.beforeBegin = make([]uint, n)
	s.beforeCommit = make([]uint, n)
	s.conflict = make([]uint, n)
	s.finals = make([][][2]int, n)
	s.appends = make([][][2]int, n)
	writes := make([]map[int]bool, n)
	for i := range s.cand {
		writes[i] = map[int]bool{}
		last := map[int]int{}
		var order []int
		for _, o := range s.cand[i].ops {
			switch o.kind {
			case history.Write:
				if _, ok := last[o.key]; !ok {
					order = append(order, o.key)
				}
				last[o.key] = o.val
				writes[i][o.key] = true
			case history.Append:
				s.appends[i] = append(s.appends[i], [2]int{o.key, o.val})
				writes[i][o.key] = true
			}
		}
		for _, k := range order {
			s.finals[i] = append(s.finals[i], [2]int{k, last[k]})
		}
	}
	for j := range s.cand {
		tj := &h.Txns[s.cand[j].idx]
		for i := range s.cand {
			if i == j {
				continue
			}
			ti := &h.Txns[s.cand[i].idx]
			for k := range writes[j] {
				if writes[i][k] {
					s.conflict[j] |= 1 << i
				}
			}
			if opts.Level.SessionOrder() && sessionBefore(h, rank, s.cand[i].idx, s.cand[j].idx) {
				s.beforeBegin[j] |= 1 << i
			}
			if opts.Level.RealTime() && ti.HasTime && tj.HasTime && opts.Precedes(ti, tj) {
				if opts.Level.SnapshotRealTime() {
					s.beforeBegin[j] |= 1 << i
				} else {
					s.beforeCommit[j] |= 1 << i
				}
			}
		}
	}
	if extra != nil {
		extra(s)
	}
	var unknown []int
	var committed uint
	for i, c := range s.cand {
		if c.unknown {
			unknown = append(unknown, i)
		} else {
			committed |= 1 << i
		}
	}
	for m := 0; m < 1<<len(unknown); m++ {
		s.subset = committed
		for j, i := range unknown {
			if m&(1<<j) != 0 {
				s.subset |= 1 << i
			}
		}
		s.events = s.events[:0]
		s.failed = map[string]bool{}
		if s.dfs(0, 0, newState(s.keys)) {
			return true, append([]string(nil), s.events...), nil
		}
	}
	return false, nil, nil
}

// dfs places the next event: a begin whose session and real-time
// predecessors have committed and whose reads the current versions
// reproduce, or the commit of a begun transaction whose predecessors have
// committed and that overlaps no begun, uncommitted writer of its keys
// (that writer could then never commit).
func (s *siSearch) dfs(begun, committed uint, st *state) bool {
	if committed == s.subset {
		return true
	}
	memo := fmt.Sprintf("%x/", begun) + s.memoKey(committed, st)
	if s.failed[memo] {
		return false
	}
	for i := range s.cand {
		bit := uint(1) << i
		if s.subset&bit == 0 || committed&bit != 0 {
			continue
		}
		if begun&bit == 0 {
			if s.beforeBegin[i]&s.subset&^committed != 0 {
				continue
			}
			// Reads run on a copy (own writes visible only to i); an
			// unknown initial value the reads bind is a fact of the
			// store, kept for every later reader.
			snap := st.clone()
			if !s.apply(&s.cand[i], snap) {
				continue
			}
			next := st.clone()
			next.regInit, next.lInit, next.lBound = snap.regInit, snap.lInit, snap.lBound
			s.events = append(s.events, "begin "+s.id(i))
			if s.dfs(begun|bit, committed, next) {
				return true
			}
			s.events = s.events[:len(s.events)-1]
			continue
		}
		if s.beforeCommit[i]&s.subset&^committed != 0 {
			continue
		}
		if s.conflict[i]&begun&^committed != 0 {
			continue
		}
		if s.afterBegin != nil && s.afterBegin[i]&s.subset&^begun != 0 {
			continue
		}
		next := st.clone()
		for _, kv := range s.finals[i] {
			next.reg[kv[0]] = kv[1]
		}
		for _, ke := range s.appends[i] {
			a := next.app[ke[0]]
			next.app[ke[0]] = append(a[:len(a):len(a)], ke[1])
		}
		s.events = append(s.events, "commit "+s.id(i))
		if s.dfs(begun, committed|bit, next) {
			return true
		}
		s.events = s.events[:len(s.events)-1]
	}
	s.failed[memo] = true
	return false
}

// id names candidate i for the witness.
func (s *siSearch) id(i int) string { return s.hist.Txns[s.cand[i].idx].ID }

// replaySIWitness checks an event sequence on its own terms: every
// committed transaction begins and commits once, begin first; no aborted
// one appears; the level's orders and first committer wins hold; and
// replaying each transaction's reads at its begin, on the versions
// committed before it, reproduces them. It shares the order rules
// (sessionBefore, Options.Precedes) with checkSI, not its search.
func replaySIWitness(h *history.History, opts history.Options, events []string) error {
	byID := make(map[string]int, len(h.Txns))
	for i := range h.Txns {
		byID[h.Txns[i].ID] = i
	}
	beginAt, commitAt := map[int]int{}, map[int]int{}
	for p, ev := range events {
		kind, id, ok := strings.Cut(ev, " ")
		i, known := byID[id]
		if !ok || !known || (kind != "begin" && kind != "commit") {
			return fmt.Errorf("witness event %q names no transaction of the history", ev)
		}
		if h.Txns[i].Status == history.Aborted {
			return fmt.Errorf("witness names aborted transaction %s", id)
		}
		at := beginAt
		if kind == "commit" {
			at = commitAt
		}
		if _, dup := at[i]; dup {
			return fmt.Errorf("witness has %q twice", ev)
		}
		at[i] = p
	}
	for i := range h.Txns {
		_, b := beginAt[i]
		c, cm := commitAt[i]
		switch {
		case b != cm:
			return fmt.Errorf("witness begins or commits %s, not both", h.Txns[i].ID)
		case !cm && h.Txns[i].Status == history.Committed:
			return fmt.Errorf("witness leaves out committed transaction %s", h.Txns[i].ID)
		case cm && c < beginAt[i]:
			return fmt.Errorf("witness commits %s before it begins", h.Txns[i].ID)
		}
	}
	rank := sessionRanks(h)
	writesKey := func(i int, k history.Key) bool {
		for _, op := range h.Txns[i].Ops {
			if op.Key == k && op.Kind != history.Read {
				return true
			}
		}
		return false
	}
	for a, ca := range commitAt {
		for b, cb := range commitAt {
			if a == b {
				continue
			}
			ta, tb := &h.Txns[a], &h.Txns[b]
			if opts.Level.SessionOrder() && sessionBefore(h, rank, a, b) && ca > beginAt[b] {
				return fmt.Errorf("witness begins %s before %s, earlier in its session, commits", tb.ID, ta.ID)
			}
			if opts.Level.RealTime() && opts.Precedes(ta, tb) {
				if opts.Level.SnapshotRealTime() && ca > beginAt[b] {
					return fmt.Errorf("witness begins %s before %s, which precedes it in real time, commits", tb.ID, ta.ID)
				}
				if ca > cb {
					return fmt.Errorf("witness commits %s before %s, which precedes it in real time", tb.ID, ta.ID)
				}
			}
			// Overlap: b commits while a is open.
			if beginAt[a] < cb && cb < ca {
				for _, op := range ta.Ops {
					if op.Kind != history.Read && writesKey(b, op.Key) {
						return fmt.Errorf("witness overlaps %s and %s, which both write %s", ta.ID, tb.ID, op.Key)
					}
				}
			}
		}
	}
	// Replay: a serial history of snapshots. Each transaction is replayed
	// whole at its begin with ReplayWitness's register and list rules, on
	// the store as the commits before it left it; its effects enter the
	// store at its commit.
	lists := h.ListKeys()
	unknownInit := opts.InitialState == history.InitialUnknown
	reg := map[history.Key]history.Value{}
	regInit := map[history.Key]history.Value{}
	app := map[history.Key][]history.Value{}
	lInit := map[history.Key][]history.Value{}
	type effect struct {
		reg map[history.Key]history.Value
		app map[history.Key][]history.Value
	}
	pending := map[int]effect{}
	for _, ev := range events {
		kind, id, _ := strings.Cut(ev, " ")
		i := byID[id]
		t := &h.Txns[i]
		if kind == "commit" {
			for k, v := range pending[i].reg {
				reg[k] = v
			}
			for k, es := range pending[i].app {
				app[k] = append(append([]history.Value(nil), app[k]...), es...)
			}
			continue
		}
		own := effect{reg: map[history.Key]history.Value{}, app: map[history.Key][]history.Value{}}
		for n, op := range t.Ops {
			k := op.Key
			switch {
			case op.Kind == history.Write:
				own.reg[k] = op.Value
			case op.Kind == history.Append:
				own.app[k] = append(own.app[k], op.Value)
			case lists[k]:
				read := readsList(op)
				cur := append(append([]history.Value(nil), app[k]...), own.app[k]...)
				init, bound := lInit[k]
				if !unknownInit {
					init, bound = nil, true
				}
				if !bound {
					if len(read) < len(cur) || !equalValues(read[len(read)-len(cur):], cur) {
						return fmt.Errorf("witness: txn %s op %d (%s) would read some list ending in %v", t.ID, n, op, cur)
					}
					init = append([]history.Value(nil), read[:len(read)-len(cur)]...)
					lInit[k] = init
				}
				want := append(append([]history.Value(nil), init...), cur...)
				if !equalValues(read, want) {
					return fmt.Errorf("witness: txn %s op %d (%s) would read %v", t.ID, n, op, want)
				}
			default:
				want, written := own.reg[k]
				if !written {
					want, written = reg[k]
				}
				if !written {
					init, bound := regInit[k]
					switch {
					case !unknownInit:
						want = history.Null
					case bound:
						want = init
					default:
						regInit[k] = op.Value
						want = op.Value
					}
				}
				if op.Value != want {
					return fmt.Errorf("witness: txn %s op %d (%s) would read %s", t.ID, n, op, want)
				}
			}
		}
		pending[i] = own
	}
	return nil
}

func equalValues(a, b []history.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package oracle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// TinyConfig chooses what RandomTiny's histories contain.
type TinyConfig struct {
	// MinTxns and MaxTxns bound the number of transactions (2..6 by
	// default; at most MaxTxns of the oracle).
	MinTxns, MaxTxns int
	// Keys is the number of keys (2..3 by default: 0 picks one of them).
	Keys int
	// Values is the size of each key's value domain; a small domain makes
	// duplicate writes common (docs/SEMANTICS.md §3, history J).
	Values int
	// Timestamps gives every transaction a client interval; without them
	// only levels without real time can be checked.
	Timestamps bool
	// Sessions groups transactions into sequential client sessions.
	Sessions bool
	// Lists makes some keys append-only lists.
	Lists bool
	// Unknowns and Aborts let transactions end with those outcomes.
	Unknowns, Aborts bool
	// InitialValues starts the simulated store with a random value in
	// each key, which only --initial-state unknown can explain.
	InitialValues bool
	// Anomalous is the probability that the simulated store is not strict
	// serializable: a transaction may read from a snapshot older than its
	// commit (stale reads, lost updates, write skew).
	Anomalous float64
	// Staleness bounds how far back (in time units) such a read may look.
	Staleness float64
	// MaxOps bounds the steps per transaction (a read, a write, or a read
	// then a write of one key).
	MaxOps int
	// Mutate is the probability of each of up to MaxMutations mutations.
	Mutate       float64
	MaxMutations int

	_ struct{}
}

// DefaultTinyConfig is the mix the tests assert on: every feature on.
func DefaultTinyConfig() TinyConfig {
	return TinyConfig{
		MinTxns: 2, MaxTxns: 6, Values: 3, MaxOps: 4,
		Timestamps: true, Sessions: true, Lists: true, Unknowns: true, Aborts: true,
		Anomalous: 0.8, Staleness: 80, Mutate: 0.35, MaxMutations: 2,
	}
}

// RandomTiny generates a tiny history from a random concurrent execution
// of a store that is strict serializable or, with probability
// cfg.Anomalous, lets transactions read old snapshots; then it mutates the
// history (a read value changed, an op dropped or added, an outcome
// flipped, timestamps shifted until they tie, a written value duplicated,
// a key turned into a list, a transaction moved to another session).
// Uniformly random tiny histories would be nearly all garbage reads
// (docs/SEMANTICS.md §4); executions keep most reads explainable so that
// search is needed to tell valid from invalid. The result always passes
// history.Validate.
func RandomTiny(rng *rand.Rand, cfg TinyConfig) *history.History {
	g := &tinyGen{rng: rng, cfg: cfg}
	g.plan()
	g.execute()
	for range cfg.MaxMutations {
		if rng.Float64() < cfg.Mutate {
			g.mutate()
		}
	}
	return g.h
}

type tinyGen struct {
	rng  *rand.Rand
	cfg  TinyConfig
	h    *history.History
	keys []history.Key
	list map[history.Key]bool
	init map[history.Key]history.Value
	// Simulated commit points, and whether reads may see older states.
	cp    []float64
	stale []bool
}

func (g *tinyGen) intn(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g *tinyGen) value() history.Value {
	return history.IntValue(int64(g.intn(1, max(g.cfg.Values, 1))))
}

// plan draws the transactions' shapes, sessions, intervals and outcomes.
func (g *tinyGen) plan() {
	cfg := g.cfg
	lo, hi := max(cfg.MinTxns, 1), min(max(cfg.MaxTxns, cfg.MinTxns, 1), MaxTxns)
	n := g.intn(min(lo, hi), hi)
	nk := cfg.Keys
	if nk <= 0 {
		nk = g.intn(2, 3)
	}
	g.list = map[history.Key]bool{}
	g.init = map[history.Key]history.Value{}
	for i := range nk {
		k := history.StringValue(string(rune('x' + i%3)))
		if i >= 3 {
			k = history.StringValue(fmt.Sprintf("k%d", i))
		}
		g.keys = append(g.keys, k)
		g.list[k] = cfg.Lists && g.rng.IntN(3) == 0
		if cfg.InitialValues && g.rng.IntN(2) == 0 {
			g.init[k] = g.value()
		}
	}
	g.h = &history.History{Txns: make([]history.Txn, n)}
	sessions := 1 + g.rng.IntN(n)
	if !cfg.Sessions {
		sessions = n
	}
	// Each session is one client: its transactions run one after another.
	clock := make([]int64, sessions)
	for s := range clock {
		clock[s] = int64(g.intn(0, 30))
	}
	g.cp, g.stale = make([]float64, n), make([]bool, n)
	for i := range g.h.Txns {
		t := &g.h.Txns[i]
		t.ID = fmt.Sprintf("T%d", i+1)
		s := g.rng.IntN(sessions)
		if cfg.Sessions {
			t.Session, t.HasSession = fmt.Sprintf("c%d", s+1), true
		}
		t.Start = clock[s] + int64(g.intn(0, 12))
		t.End = t.Start + int64(g.intn(0, 30))
		clock[s] = t.End
		t.HasTime = cfg.Timestamps
		switch r := g.rng.IntN(10); {
		case cfg.Aborts && r == 0:
			t.Status = history.Aborted
		case cfg.Unknowns && r == 1:
			t.Status = history.Unknown
		}
		for range g.intn(1, max(cfg.MaxOps, 1)) {
			k := g.keys[g.rng.IntN(len(g.keys))]
			read := history.Op{Kind: history.Read, Key: k, IsList: g.list[k]}
			write := history.Op{Kind: history.Write, Key: k, Value: g.value()}
			if g.list[k] {
				write.Kind = history.Append
			}
			// Read-modify-write is what lost updates and write skew need.
			switch g.rng.IntN(3) {
			case 0:
				t.Ops = append(t.Ops, read)
			case 1:
				t.Ops = append(t.Ops, write)
			default:
				t.Ops = append(t.Ops, read, write)
			}
		}
	}
	// Input order is start order, as a log sorted by client time would be.
	sort.SliceStable(g.h.Txns, func(a, b int) bool { return g.h.Txns[a].Start < g.h.Txns[b].Start })
	for i := range g.h.Txns {
		t := &g.h.Txns[i]
		t.ID = fmt.Sprintf("T%d", i+1)
		// The transaction takes effect at a point of its interval; an
		// anomalous store lets its reads see older states, each its own.
		g.cp[i] = float64(t.Start) + g.rng.Float64()*float64(t.End-t.Start)
		g.stale[i] = g.rng.Float64() < cfg.Anomalous
	}
}

// readPoint is the instant whose committed state a read of txn i sees.
func (g *tinyGen) readPoint(i int) float64 {
	if g.stale[i] {
		return g.cp[i] - g.rng.Float64()*g.cfg.Staleness
	}
	return g.cp[i]
}

// execute fills in what each read saw: the versions committed before its
// read point, then its own writes. Aborted transactions install nothing,
// unknown ones install with probability one half.
func (g *tinyGen) execute() {
	installed := map[history.Key][]version{}
	for i := range g.h.Txns {
		t := &g.h.Txns[i]
		if t.Status == history.Aborted || (t.Status == history.Unknown && g.rng.IntN(2) == 0) {
			continue
		}
		last := map[history.Key]history.Value{}
		for _, op := range t.Ops {
			switch op.Kind {
			case history.Write:
				last[op.Key] = op.Value
			case history.Append:
				installed[op.Key] = append(installed[op.Key], version{g.cp[i], op.Value})
			}
		}
		for k, v := range last {
			installed[k] = append(installed[k], version{g.cp[i], v})
		}
	}
	for _, vs := range installed {
		sort.SliceStable(vs, func(a, b int) bool { return vs[a].at < vs[b].at })
	}
	for i := range g.h.Txns {
		t := &g.h.Txns[i]
		own := map[history.Key]bool{}
		reg := map[history.Key]history.Value{}
		app := map[history.Key][]history.Value{}
		for n := range t.Ops {
			op := &t.Ops[n]
			k := op.Key
			switch op.Kind {
			case history.Write:
				own[k], reg[k] = true, op.Value
				continue
			case history.Append:
				if !own[k] {
					app[k] = g.snapshotList(k, installed[k], g.readPoint(i))
				}
				own[k] = true
				app[k] = append(app[k], op.Value)
				continue
			}
			switch {
			case g.list[k] && own[k]:
				op.List = slices.Clone(app[k])
			case g.list[k]:
				op.List = g.snapshotList(k, installed[k], g.readPoint(i))
			case own[k]:
				op.Value = reg[k]
			default:
				op.Value = history.Null
				if v, ok := g.init[k]; ok {
					op.Value = v
				}
				at := g.readPoint(i)
				for _, v := range installed[k] {
					if v.at < at {
						op.Value = v.val
					}
				}
			}
		}
	}
}

// version is a value installed at a commit point of the simulation.
type version struct {
	at  float64
	val history.Value
}

func (g *tinyGen) snapshotList(k history.Key, vs []version, at float64) []history.Value {
	var out []history.Value
	if v, ok := g.init[k]; ok {
		out = append(out, v)
	}
	for _, v := range vs {
		if v.at < at {
			out = append(out, v.val)
		}
	}
	return out
}

// mutate applies one random mutation, keeping the history valid input:
// ids unique, end >= start, each key a register or a list throughout.
func (g *tinyGen) mutate() {
	h := g.h
	t := &h.Txns[g.rng.IntN(len(h.Txns))]
	switch g.rng.IntN(9) {
	case 0, 1: // change a read value, usually to one somebody wrote
		reads := opsOf(t, func(op history.Op) bool { return op.Kind == history.Read })
		if len(reads) == 0 {
			return
		}
		op := &t.Ops[reads[g.rng.IntN(len(reads))]]
		if g.list[op.Key] {
			op.List = g.mutateList(op.Key, op.List)
			return
		}
		op.Value = g.writtenValue(op.Key)
	case 2: // drop an op
		if len(t.Ops) > 0 {
			i := g.rng.IntN(len(t.Ops))
			t.Ops = slices.Delete(t.Ops, i, i+1)
		}
	case 3: // add an op: a read of a written value, or a write
		k := g.keys[g.rng.IntN(len(g.keys))]
		op := history.Op{Kind: history.Read, Key: k}
		switch {
		case g.list[k] && g.rng.IntN(2) == 0:
			op.IsList, op.List = true, g.mutateList(k, nil)
		case g.list[k]:
			op.Kind, op.Value = history.Append, g.value()
		case g.rng.IntN(2) == 0:
			op.Value = g.writtenValue(k)
		default:
			op.Kind, op.Value = history.Write, g.value()
		}
		at := g.rng.IntN(len(t.Ops) + 1)
		t.Ops = slices.Insert(t.Ops, at, op)
	case 4: // flip an outcome
		switch {
		case t.Status != history.Committed:
			t.Status = history.Committed
		case g.cfg.Unknowns && (!g.cfg.Aborts || g.rng.IntN(2) == 0):
			t.Status = history.Unknown
		case g.cfg.Aborts:
			t.Status = history.Aborted
		}
	case 5: // shift timestamps so that two transactions tie
		u := &h.Txns[g.rng.IntN(len(h.Txns))]
		switch g.rng.IntN(3) {
		case 0: // u starts when t ends
			d := t.End - u.Start
			u.Start, u.End = u.Start+d, u.End+d
		case 1: // same start
			u.End += t.Start - u.Start
			u.Start = t.Start
		default: // t shrinks to a point at u's start
			t.Start, t.End = u.Start, u.Start
		}
	case 6: // duplicate a written value
		writes := opsOf(t, func(op history.Op) bool { return op.Kind != history.Read })
		if len(writes) == 0 {
			return
		}
		op := &t.Ops[writes[g.rng.IntN(len(writes))]]
		op.Value = g.element(op.Key)
	case 7: // make a register key a list
		if !g.cfg.Lists {
			return
		}
		k := g.keys[g.rng.IntN(len(g.keys))]
		if g.list[k] {
			return
		}
		g.list[k] = true
		for i := range h.Txns {
			for n := range h.Txns[i].Ops {
				op := &h.Txns[i].Ops[n]
				if op.Key != k {
					continue
				}
				switch {
				case op.Kind == history.Write:
					op.Kind = history.Append
				case op.Value != history.Null:
					op.IsList, op.List, op.Value = true, []history.Value{op.Value}, ""
				default:
					op.IsList, op.Value = true, ""
				}
			}
		}
	case 8: // move a transaction to another session, or shift it in time
		if g.cfg.Sessions && g.rng.IntN(2) == 0 {
			t.Session = h.Txns[g.rng.IntN(len(h.Txns))].Session
			return
		}
		d := int64(g.intn(-20, 20))
		t.Start, t.End = max(t.Start+d, 0), max(t.End+d, 0)
	}
}

func opsOf(t *history.Txn, keep func(history.Op) bool) []int {
	var idx []int
	for n, op := range t.Ops {
		if keep(op) {
			idx = append(idx, n)
		}
	}
	return idx
}

// writtenValue picks a value some transaction writes to k, or null, or
// (rarely) anything in the domain: reads of unwritten values are garbage
// reads, which need no search.
func (g *tinyGen) writtenValue(k history.Key) history.Value {
	var vals []history.Value
	for i := range g.h.Txns {
		for _, op := range g.h.Txns[i].Ops {
			if op.Kind != history.Read && op.Key == k {
				vals = append(vals, op.Value)
			}
		}
	}
	switch r := g.rng.IntN(8); {
	case r == 0:
		return history.Null
	case r == 1 || len(vals) == 0:
		return g.value()
	}
	return vals[g.rng.IntN(len(vals))]
}

// mutateList changes a list read: drop, swap, or add an appended element.
func (g *tinyGen) mutateList(k history.Key, l []history.Value) []history.Value {
	l = slices.Clone(l)
	switch r := g.rng.IntN(3); {
	case r == 0 && len(l) > 0:
		i := g.rng.IntN(len(l))
		return slices.Delete(l, i, i+1)
	case r == 1 && len(l) > 1:
		i := g.rng.IntN(len(l) - 1)
		l[i], l[i+1] = l[i+1], l[i]
		return l
	}
	return append(l, g.element(k))
}

// element is a value to append to list k: one appended elsewhere, or new.
func (g *tinyGen) element(k history.Key) history.Value {
	if v := g.writtenValue(k); v != history.Null {
		return v
	}
	return g.value()
}

package stampcheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Report is a check with the database's facts.
type Report struct {
	// Result is the verdict on the level, the black-box one
	// (docs/SEMANTICS.md §10): Valid with a witness, Invalid with the
	// anomalies incremental.Check found, or Unknown.
	Result *incremental.Result
	// Inconsistent, when the history is valid at the level but not with
	// its facts, is a subset-minimal set of transactions whose facts
	// contradict their reads (ids, in input order); Why says how the
	// facts' own witness failed on the whole history.
	Inconsistent []string
	Why          string
	// ByFacts: the verdict is the facts' witness; no search ran.
	ByFacts bool
	// Unused, when not empty, says why the facts were not used (they
	// leave something open that only a search over them could decide,
	// and at the snapshot levels that search is the black box alone).
	Unused string
}

// BlackBox decides a level without the facts; incremental.Check for the
// serializable levels, the snapshot family's checker for the others.
type BlackBox func(ctx context.Context, h *history.History, opts history.Options) (*incremental.Result, error)

// Check checks h at a serializable level (opts.Level has no snapshot
// semantics) with its facts: the commit-stamp witness first; when it
// fails, or the facts leave something open, incremental.Check on the
// history decides the level, and on a valid history the facts are then
// checked as constraints (the pins of withPins) and, if they cannot hold,
// a minimal inconsistent set is found.
func Check(ctx context.Context, h *history.History, opts history.Options, cfg incremental.Config) (*Report, error) {
	return CheckWith(ctx, h, opts, cfg, nil)
}

// CheckWith is Check with another black box for the level's verdict (nil:
// incremental.Check with cfg); the facts' consistency is always decided
// with incremental.Check on the pinned history.
func CheckWith(ctx context.Context, h *history.History, opts history.Options, cfg incremental.Config, blackBox BlackBox) (*Report, error) {
	if blackBox == nil {
		blackBox = func(ctx context.Context, h *history.History, opts history.Options) (*incremental.Result, error) {
			return incremental.Check(ctx, h, opts, cfg)
		}
	}
	if !h.HasFacts() {
		res, err := blackBox(ctx, h, opts)
		return &Report{Result: res, Unused: "the history carries no database facts"}, err
	}
	if err := needTime(h, opts); err != nil {
		return nil, err
	}
	var fast Fast
	if usesPG(h) {
		fast, _ = analyze(h, opts, SnapshotRules{})
		if unknownWrites(h) {
			fast = Fast{Outcome: Open, Why: "a transaction of unknown outcome writes, and PostgreSQL's facts are then not used"}
		}
		if fast.Outcome == Witnessed {
			// PostgreSQL's facts fix every read's source and version
			// order; the pinned search has nothing left to choose.
			ok, res, err := consistentSerial(ctx, h, opts)
			if err != nil {
				return nil, err
			}
			if ok {
				return &Report{Result: res, ByFacts: true}, nil
			}
			fast = Fast{Outcome: Contradicted, Why: "the versions PostgreSQL's snapshots fix close a cycle of the level"}
		}
	} else {
		fast = CheckSerial(h, opts)
		if fast.Outcome == Witnessed {
			return &Report{Result: witnessResult(h, opts, fast.Order), ByFacts: true}, nil
		}
	}
	res, err := blackBox(ctx, h, opts)
	if err != nil || res.Verdict != incremental.Valid {
		return &Report{Result: res, Why: fast.Why}, err
	}
	rep := &Report{Result: res}
	if fast.Outcome == Open {
		rep.Unused = fast.Why
	}
	decide := func(c *history.History) (bool, []string, error) {
		ok, res, err := consistentSerial(ctx, c, opts)
		var core []string
		if !ok && res != nil && len(res.Anomalies) > 0 {
			core = res.Anomalies[0].Core
		}
		return ok, core, err
	}
	return rep, inconsistency(ctx, h, opts, fast, rep, decide)
}

// CheckSnapshotLevel checks h at a snapshot level with its facts: the
// facts' snapshots first (CheckSnapshot); when they fail or leave
// something open, blackBox decides the level, and on a valid history a
// failure of the facts is reduced to a minimal inconsistent set. Wiring:
// `check --level snapshot-isolation` (and its variants) calls this with
// the snapshot family's checker as blackBox and the level's rules.
func CheckSnapshotLevel(ctx context.Context, h *history.History, opts history.Options, rules SnapshotRules, blackBox BlackBox) (*Report, error) {
	if err := needTime(h, opts); err != nil {
		return nil, err
	}
	fast := CheckSnapshot(h, opts, rules)
	if fast.Outcome == Witnessed {
		res := &incremental.Result{Verdict: incremental.Valid, Options: opts}
		res.Stats.Txns = len(h.Txns)
		res.Witness = make([]string, len(fast.Events))
		for p, e := range fast.Events {
			// The snapshot family's witness shape (incremental's
			// witnessSI): "begin ID" and "commit ID".
			if e.Commit {
				res.Witness[p] = "commit " + h.Txns[e.Txn].ID
			} else {
				res.Witness[p] = "begin " + h.Txns[e.Txn].ID
			}
		}
		return &Report{Result: res, ByFacts: true}, nil
	}
	if blackBox == nil {
		return nil, errors.New("stampcheck: the facts do not settle this history and no black-box checker of the level is wired")
	}
	res, err := blackBox(ctx, h, opts)
	if err != nil || res.Verdict != incremental.Valid {
		return &Report{Result: res, Why: fast.Why}, err
	}
	rep := &Report{Result: res}
	if fast.Outcome == Open {
		rep.Unused = fast.Why
		return rep, nil
	}
	decide := func(c *history.History) (bool, []string, error) {
		return CheckSnapshot(c, opts, rules).Outcome != Contradicted, nil, nil
	}
	return rep, inconsistency(ctx, h, opts, fast, rep, decide)
}

// needTime refuses a real-time level on a history with a transaction
// without client timestamps, as incremental.Check does (the same error,
// naming the transaction): the facts' witness must not make such a
// history valid where the black box calls it an input error.
func needTime(h *history.History, opts history.Options) error {
	if !opts.Level.RealTime() {
		return nil
	}
	for i := range h.Txns {
		if t := &h.Txns[i]; !t.HasTime {
			return &history.Error{Pos: t.Pos, ID: t.ID, Field: "start", Err: fmt.Errorf("%w: %s orders transactions by client time", incremental.ErrMissingTimestamps, opts.Level)}
		}
	}
	return nil
}

// witnessResult is the Valid result of a fast witness.
func witnessResult(h *history.History, opts history.Options, order []int32) *incremental.Result {
	res := &incremental.Result{Verdict: incremental.Valid, Options: opts}
	res.Stats.Txns = len(h.Txns)
	res.Witness = make([]string, len(order))
	for p, i := range order {
		res.Witness[p] = h.Txns[i].ID
	}
	return res
}

// inconsistency fills rep.Inconsistent when h, valid at the level, is not
// valid with its facts. decide is the exact test "valid with the facts"
// on a projection. The search starts from the fast path's seed when that
// is already inconsistent (cheap: a few transactions), and otherwise from
// the whole history.
func inconsistency(ctx context.Context, h *history.History, opts history.Options, fast Fast, rep *Report, decide3 func(*history.History) (bool, []string, error)) error {
	decide := func(c *history.History) (bool, error) {
		ok, _, err := decide3(c)
		return ok, err
	}
	wix := newWriterIndex(h)
	var start []int32
	if fast.Outcome == Contradicted && len(fast.Seed) > 0 {
		ok, err := decide(projectFacts(h, opts, wix, fast.Seed))
		if err != nil {
			return err
		}
		if !ok {
			start = fast.Seed
		}
	}
	if start == nil {
		ok, hint, err := decide3(h)
		if err != nil || ok {
			return err
		}
		// The pinned search's core, when it is inconsistent on its own
		// (it is minimal for the pins among its members, which a
		// projection rebuilds, so it nearly always is), else everything.
		if len(hint) > 0 {
			byID := make(map[string]int32, len(h.Txns))
			for i := range h.Txns {
				byID[h.Txns[i].ID] = int32(i)
			}
			for _, id := range hint {
				start = append(start, byID[id])
			}
			start = dedup(start)
			if ok, err := decide(projectFacts(h, opts, wix, start)); err != nil || ok {
				if err != nil {
					return err
				}
				start = nil
			}
		}
		if start == nil {
			start = make([]int32, len(h.Txns))
			for i := range start {
				start[i] = int32(i)
			}
		}
	}
	core, err := Minimize(ctx, h, opts, start, decide)
	if err != nil {
		return err
	}
	for _, i := range core {
		rep.Inconsistent = append(rep.Inconsistent, h.Txns[i].ID)
	}
	rep.Why = fast.Why
	return nil
}

// Minimize shrinks an inconsistent set by deletion (docs/SEMANTICS.md
// §3): members are tried latest first by start, then end, then id, and a
// deletion is kept when the projection is still inconsistent with its
// facts. decide must be the exact test; the result is subset-minimal.
func Minimize(ctx context.Context, h *history.History, opts history.Options, members []int32, decide func(*history.History) (bool, error)) ([]int32, error) {
	wix := newWriterIndex(h)
	cur := slices.Clone(members)
	try := slices.Clone(members)
	slices.SortFunc(try, func(a, b int32) int {
		ta, tb := &h.Txns[a], &h.Txns[b]
		return -cmp.Or(cmp.Compare(ta.Start, tb.Start), cmp.Compare(ta.End, tb.End), cmp.Compare(ta.ID, tb.ID))
	})
	// Passes repeat until none deletes: with a transaction of unknown
	// outcome in the set the facts may leave a projection open (counted
	// as consistent), so a deletion refused early can succeed once that
	// transaction is gone; the last pass proves every single deletion
	// consistent.
	for changed := true; changed; {
		changed = false
		for _, m := range try {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !slices.Contains(cur, m) {
				continue
			}
			without := slices.DeleteFunc(slices.Clone(cur), func(x int32) bool { return x == m })
			if len(without) == 0 {
				continue
			}
			ok, err := decide(projectFacts(h, opts, wix, without))
			if err != nil {
				return nil, err
			}
			if !ok {
				cur, changed = without, true
			}
		}
	}
	slices.Sort(cur)
	return cur, nil
}

// projectFacts is H|C (incremental.Project) with the members' facts kept.
// It projects the members plus the possible writers of their reads, which
// decides every read as the whole history would, so that a small C costs
// little on a long history.
func projectFacts(h *history.History, opts history.Options, wix *writerIndex, members []int32) *history.History {
	part := wix.closure(h, members)
	sub := &history.History{Txns: make([]history.Txn, len(part))}
	for p, i := range part {
		sub.Txns[p] = h.Txns[i]
		sub.SetFacts(p, h.FactsOf(int(i)))
	}
	if sub.Facts == nil {
		sub.Facts = make([]history.Facts, len(sub.Txns))
	}
	ids := make([]string, len(members))
	for p, i := range members {
		ids[p] = h.Txns[i].ID
	}
	proj := incremental.Project(sub, opts, ids)
	at := make(map[string]int, len(sub.Txns))
	for p := range sub.Txns {
		at[sub.Txns[p].ID] = p
	}
	proj.Facts = make([]history.Facts, len(proj.Txns))
	for p := range proj.Txns {
		proj.Facts[p] = sub.Facts[at[proj.Txns[p].ID]]
	}
	return proj
}

// String is a one-line summary, for logs and tests.
func (r *Report) String() string {
	s := r.Result.Verdict.String()
	if r.Inconsistent != nil {
		s += fmt.Sprintf(", stamps inconsistent with reads: %v", r.Inconsistent)
	}
	if r.ByFacts {
		s += " (by the facts' witness)"
	}
	return s
}

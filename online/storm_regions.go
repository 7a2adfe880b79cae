package online

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Cores by region (docs/SEMANTICS.md §5 "Alert batches by region").
//
// batchCores on the whole alert history H|S solved one guarded instance
// with a selector assumption per transaction of the window for every
// core and once more to find nothing left: under an unknown initial
// state the window of a storm holds thousands of transactions, and each
// of those solves (thousands of assumption levels, every variable
// assigned on the last, satisfiable one) cost seconds; 94% of a storm's
// CPU. Cores are local: an anomaly's transactions touch a few keys, and
// in a storm most anomalies touch keys nothing else in the window does.
//
// stormCores first splits S into its key regions: the classes of
// "touches a key the other touches" (reads, writes and appends alike),
// closed transitively. Every region but the largest is checked on its
// own projection H|R, and each of its cores (check --max-anomalies on
// H|R, minus the cores already found) is taken. Then all that is left,
// H|(S minus the cores), is checked the same way, and its cores are
// taken too: the batch ends only when H|S minus every core taken is
// consistent, the same stop as before. Every core C lies in a region R
// or in the rest, both subsets of S minus the earlier cores, and
// (H|X)|C = H|C for C ⊆ X: C violates on its own and is subset-minimal
// on the whole history, and it is a minimal core of H|S minus the cores
// before it, which is what a batch promises. A region is only where the
// search looks first, never a reason to stop: nothing rests on regions
// being independent (real time and sessions may tie them), and a
// violation only their union shows is found by the last check.

// stormRegions switches the search by region on (a variable so that
// tests can hold it to the search on the whole alert history).
var stormRegions = true

// stormRegionCores counts the cores found in a region rather than in the
// rest (for the tests: the regions must find some).
var stormRegionCores atomic.Int64

// stormCores is batchCores by region (see above).
func (o *Online) stormCores(ctx context.Context, h *history.History) ([]incremental.Anomaly, error) {
	regions := keyRegions(h)
	remaining := make([]bool, len(h.Txns))
	for i := range remaining {
		remaining[i] = true
	}
	var out []incremental.Anomaly
	// check finds the cores of hp = H|in, in ⊆ remaining, and takes them
	// out of remaining.
	var buf []byte
	// check's pos are hp's positions in h: a core's ids are looked up
	// among them (a map of all of h's ids per confirmation was a tenth
	// of the search once regions were remembered).
	check := func(hp *history.History, pos []int32, region bool) error {
		// A region whose projection was found consistent before is
		// consistent (storm_memo.go); the last check, of all that is
		// left, is always made.
		var enc []byte
		memo := false
		if region {
			buf, memo = encodeProjection(buf[:0], hp)
			enc = buf
			if c, ok := memoConsistent(o.opts, string(enc)); ok && memo {
				// Counted as the check it stands for (storm_memo.go,
				// checkCost).
				stormMemoHits.Add(1)
				o.checks++
				o.conflicts += c.conflicts
				o.constraints += c.constraints
				o.pruned += c.pruned
				return nil
			}
		}
		o.checks++
		res, err := incremental.Check(ctx, hp, o.opts, incremental.Explaining(incremental.Config{MaxAnomalies: batchAnomalies - len(out)}))
		if err != nil {
			return err
		}
		if memo && res.Verdict == incremental.Valid && len(res.Anomalies) == 0 && !res.Stats.TimedOutAny {
			rememberConsistent(o.opts, string(enc), checkCost{
				conflicts:   res.Stats.Conflicts,
				constraints: int64(res.Stats.Reads + res.Stats.Pairs),
				pruned:      int64(res.Stats.Pruned),
			})
		}
		o.conflicts += res.Stats.Conflicts
		o.constraints += int64(res.Stats.Reads + res.Stats.Pairs)
		o.pruned += int64(res.Stats.Pruned)
		if res.Verdict == incremental.Unknown || res.Stats.TimedOutAny {
			if err := ctx.Err(); err != nil {
				return err
			}
			return errors.New("engine: alert check gave up")
		}
		var at map[string]int32
		if len(res.Anomalies) > 0 {
			at = make(map[string]int32, len(pos))
			for k, t := range pos {
				at[hp.Txns[k].ID] = t
			}
		}
		for _, an := range res.Anomalies {
			for _, id := range an.Core {
				t, ok := at[id]
				if !ok || !remaining[t] {
					return errors.New("engine: a region's core names a transaction outside it")
				}
				remaining[t] = false
			}
			out = append(out, an)
			if region {
				stormRegionCores.Add(1)
			}
		}
		return nil
	}
	var left []bool // the regions the last check leaves out (storm_separate.go)
	var sessions map[string]int
	if len(regions) > 1 {
		largest := 0
		for k, r := range regions {
			if len(r) > len(regions[largest]) {
				largest = k
			}
		}
		for k, r := range regions {
			if k == largest {
				continue
			}
			found := len(out)
			// A region is closed under "touches a key": H|R is its
			// transactions as they are (storm_regions.go, regionHistory).
			if err := check(regionHistory(h, r), r, true); err != nil {
				return out, err
			}
			if len(out) >= batchAnomalies {
				return out, nil
			}
			if len(out) == found && stormSeparate {
				if sessions == nil {
					sessions = sessionCounts(h)
				}
				if separable(h, r, o.opts, sessions) {
					// Consistent, and tied to the rest by real time
					// alone: the last check need not hold it.
					if left == nil {
						left = make([]bool, len(h.Txns))
					}
					for _, t := range r {
						left[t] = true
					}
				}
			}
		}
	}
	if len(out) > 0 && stormEndOnRegionCore {
		// The regions found cores: the batch ends here, and the step's
		// next solve of the instance without them says whether anything
		// is left (storm_separate.go).
		return out, nil
	}
	last := remaining
	if left != nil {
		last = make([]bool, len(h.Txns))
		for i := range last {
			last[i] = remaining[i] && !left[i]
		}
	}
	hl, pl := o.lastHistory(h, regions, last)
	if err := check(hl, pl, false); err != nil {
		return out, err
	}
	return out, nil
}

// regionHistory is H|R for a key region r of h (positions, in order): r's
// transactions as they are. Every possible writer of a read of key k
// writes k, so it touches k and lies in r: the projection keeps every
// read (all its writers are members, or it has none, or it is internal),
// and a list read's appenders are members too. Preparing all of h to
// project each region was a fifth of a storm's alert search.
// TestStormRegionHistoryIsProjection holds it to incremental's
// projection.
func regionHistory(h *history.History, r []int32) *history.History {
	out := &history.History{Txns: make([]history.Txn, len(r))}
	for k, t := range r {
		out.Txns[k] = h.Txns[t]
	}
	return out
}

// lastHistory is H|last, with its transactions' positions in h: the regions wholly in last as they are
// (regionHistory), the regions partly in it (those that lost a core)
// projected on their own, which is their projection in h (a region holds
// every possible writer of its reads), in h's order.
func (o *Online) lastHistory(h *history.History, regions [][]int32, last []bool) (*history.History, []int32) {
	var dirty []int32 // the members of regions partly in last, in order
	for _, r := range regions {
		in, out := false, false
		for _, t := range r {
			in = in || last[t]
			out = out || !last[t]
		}
		if in && out {
			dirty = append(dirty, r...)
		}
	}
	proj := map[int32]history.Txn{}
	if len(dirty) > 0 {
		slices.Sort(dirty)
		sub := regionHistory(h, dirty)
		in := make([]bool, len(dirty))
		for k, t := range dirty {
			in[k] = last[t]
		}
		hp := incremental.Prepare(sub, o.opts).Project(in)
		k := 0
		for j, t := range dirty {
			if in[j] {
				proj[t] = hp.Txns[k]
				k++
			}
		}
	}
	out := &history.History{}
	var pos []int32
	for t := range h.Txns {
		if !last[t] {
			continue
		}
		pos = append(pos, int32(t))
		if p, ok := proj[int32(t)]; ok {
			out.Txns = append(out.Txns, p)
		} else {
			out.Txns = append(out.Txns, h.Txns[t])
		}
	}
	return out, pos
}

// keyRegions splits h's transactions into the classes of "touches a key
// the other touches", closed transitively; each class is in position
// order, and the classes are in the order of their first member.
func keyRegions(h *history.History) [][]int32 {
	parent := make([]int32, len(h.Txns))
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	owner := map[history.Key]int32{}
	for i := range h.Txns {
		for _, op := range h.Txns[i].Ops {
			o, ok := owner[op.Key]
			if !ok {
				owner[op.Key] = int32(i)
				continue
			}
			a, b := find(o), find(int32(i))
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	index := map[int32]int{}
	var out [][]int32
	for i := range h.Txns {
		r := find(int32(i))
		k, ok := index[r]
		if !ok {
			k = len(out)
			index[r] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], int32(i))
	}
	for _, r := range out {
		if !slices.IsSorted(r) {
			panic("online: key regions out of order")
		}
	}
	return out
}

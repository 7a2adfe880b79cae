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
	at := make(map[string]int32, len(h.Txns))
	for i := range h.Txns {
		at[h.Txns[i].ID] = int32(i)
	}
	ph := incremental.Prepare(h, o.opts)
	remaining := make([]bool, len(h.Txns))
	for i := range remaining {
		remaining[i] = true
	}
	var out []incremental.Anomaly
	// check finds the cores of H|in, in ⊆ remaining, and takes them out
	// of remaining.
	check := func(in []bool, region bool) error {
		o.checks++
		res, err := incremental.Check(ctx, ph.Project(in), o.opts, incremental.Explaining(incremental.Config{MaxAnomalies: batchAnomalies - len(out)}))
		if err != nil {
			return err
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
	if len(regions) > 1 {
		largest := 0
		for k, r := range regions {
			if len(r) > len(regions[largest]) {
				largest = k
			}
		}
		in := make([]bool, len(h.Txns))
		for k, r := range regions {
			if k == largest {
				continue
			}
			for _, t := range r {
				in[t] = true
			}
			if err := check(in, true); err != nil {
				return out, err
			}
			for _, t := range r {
				in[t] = false
			}
			if len(out) >= batchAnomalies {
				return out, nil
			}
		}
	}
	if err := check(remaining, false); err != nil {
		return out, err
	}
	return out, nil
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

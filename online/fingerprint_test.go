package online

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"os"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestStepFingerprint writes, per step of an evicting run, a hash of the
// reduced instance, its solve statistics and the engine state after the
// step, to $STREAMCHECK_FP (skipped without it): the A/B exactness check
// of a change to build or prepare.
func TestStepFingerprint(t *testing.T) {
	path := os.Getenv("STREAMCHECK_FP")
	if path == "" {
		t.Skip("STREAMCHECK_FP not set")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, preset := range []string{"blindw-rw", "mixed", "blindw-wh"} {
		for _, init := range []history.InitialState{history.InitialUnknown, history.InitialEmpty} {
			h := probeHistory(t, preset, 12000, 3000)
			opts := history.DefaultOptions()
			opts.Level = history.StrictSerializable
			opts.InDoubt = 5_000_000
			opts.InitialState = init
			txns := byStart(h)
			o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
			ctx := context.Background()
			stepNo := 0
			step := func() {
				stepNo++
				hs := sha256.New()
				if os.Getenv("STREAMCHECK_FP_NOBUILD") == "" {
					r := o.build()
					hashReduced(hs, r)
					if len(r.h.Txns) == 0 {
						goto stepped
					}
					st := r.solve(ctx)
					ss := r.e.Solver().Stats()
					fmt.Fprintf(hs, "st %v %d %d %d %d %d\n", st, ss.Solves, ss.Conflicts, ss.Decisions, ss.Propagations, len(r.e.Reads()))
				}
			stepped:
				alerts, err := o.Step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(hs, "alerts %d\n", len(alerts))
				hashEv(hs, &o.ev)
				fmt.Fprintf(hs, "o %d %d %d %d\n", o.checks, o.conflicts, o.constraints, o.pruned)
				fmt.Fprintf(f, "%s %v %d %x\n", preset, init, stepNo, hs.Sum(nil)[:8])
			}
			feedInStartOrder(o, opts, txns, func(i int) {
				if (i+1)%300 == 0 {
					step()
				}
			})
			o.CloseAll()
			step()
		}
	}
}

func hashReduced(hs hash.Hash, r *reduced) {
	for ti, t := range r.h.Txns {
		fmt.Fprintf(hs, "t %d %d %q %d %d %v %v %q %v\n", ti, r.pos[ti], t.ID, t.Start, t.End, t.Status, t.HasSession, t.Session, t.HasTime)
		for _, op := range t.Ops {
			fmt.Fprintf(hs, " %v %q %q %v %q\n", op.Kind, op.Key, op.Value, op.IsList, op.List)
		}
	}
	fmt.Fprintf(hs, "kept %v\n", r.e.Kept())
}

func hashEv(hs hash.Hash, st *evictState) {
	fmt.Fprintf(hs, "member %v\n", st.Member.bools())
	var ks []int
	for i := range st.GhostKeys {
		ks = append(ks, i)
	}
	slices.Sort(ks)
	for _, i := range ks {
		fmt.Fprintf(hs, "g %d %q\n", i, st.GhostKeys[i])
	}
	ks = ks[:0]
	for i := range st.Decided {
		ks = append(ks, i)
	}
	slices.Sort(ks)
	for _, i := range ks {
		fmt.Fprintf(hs, "d %d %v\n", i, st.Decided[i])
	}
	var keys []history.Key
	for k := range st.InitVal {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(hs, "i %q %q\n", k, st.InitVal[k])
	}
	kept := st.Kept
	if os.Getenv("STREAMCHECK_FP_NOKEPT") != "" {
		// Compares eviction choices alone, when a change keeps the same
		// orders in fewer pairs (evict_cover.go).
		kept = nil
	}
	fmt.Fprintf(hs, "kept %v %d %d %d\n", kept, st.Evicted, st.Ghosts, st.Disagreements)
}

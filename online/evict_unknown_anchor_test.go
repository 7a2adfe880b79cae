package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// TestBehindAnchorSound: whenever behindAnchor says an unknown u in
// doubt is behind its anchor for a member t (so R2 counts the edges and
// writer pairs between them as decided and R4 counts u an earlier
// writer; docs/SEMANTICS.md §5 "Edges behind an anchor"), u precedes t
// in every model of the step's instance that commits u: given the edge
// t -> u and u's commit the solver finds no model. It asks this of every
// pair with an edge between them, at every 50th release of generated
// streams whose unknowns stay in doubt. Mutation seen to fail it: the
// rule without "the anchor precedes t" (any unknown closed by its
// session).
func TestBehindAnchorSound(t *testing.T) {
	checked := 0
	eachSatInstanceInDoubt(t, func(ctx context.Context, o *Online, r *reduced, seed uint64, i int) {
		e, s := r.e, r.e.Solver()
		for n := range s.NumNodes() {
			u := e.NodeTxn()[n]
			if u < 0 || r.h.Txns[u].Status != history.Unknown {
				continue
			}
			// The pairs first: probing adds edges at n.
			seen := map[int32]bool{}
			var behind []int32
			s.IncidentEdges(solver.Node(n), func(other solver.Node, _ bool, _, _ solver.Lit, _ bool) {
				if tt := e.NodeTxn()[other]; tt >= 0 && !seen[tt] && o.behindAnchor(r, u, tt) {
					seen[tt] = true
					behind = append(behind, tt)
				}
			})
			for _, tt := range behind {
				sel := s.NewSelector()
				s.AddEdge(sel, e.Node()[tt], solver.Node(n))
				if st := s.Solve(ctx, sel, solver.Lit(e.Act()[u])); st != solver.Unsat {
					t.Fatalf("seed %d at %d: %s (unknown, in doubt) does not precede %s in a model that commits it (%v)", seed, i+1, r.h.Txns[u].ID, r.h.Txns[tt].ID, st)
				}
				s.AddClause(sel.Not())
				checked++
			}
		}
	})
	if checked == 0 {
		t.Fatal("no pair behind an anchor: the streams do not exercise the rule")
	}
	t.Logf("%d pairs checked", checked)
}

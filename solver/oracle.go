package solver

// Base reachability from a ReachOracle (doc.go, "Oracle"). The oracle's
// pairs are never materialized as edges. Insertion asks the oracle for the
// direct pair only (an edge u->v with v oracle-reaching u is a conflict
// made of the edge's own literals); cycles that alternate between oracle
// pairs and present edges are found by finalCheck on complete
// assignments, which also produces the witness order. This is correct but
// costs O(n²) oracle queries per complete assignment: simple by design.

// finalCheck runs when every variable is assigned. Without an oracle the
// incremental checks are complete and it returns nil. With one, it
// topologically sorts the present edges plus the oracle pairs; on a cycle
// it returns the negated literals of the cycle's literal edges.
func (t *theory) finalCheck(s *Solver) []Lit {
	if t.oracle == nil {
		return nil
	}
	n := len(t.pos)
	const (
		white = 0
		grey  = 1
		black = 2
	)
	color := make([]uint8, n)
	// A frame walks first x's present out-edges, then every other node as
	// a possible oracle successor.
	type frame struct {
		x    Node
		ei   int   // next index in out[x]
		yi   int   // next oracle candidate
		via  int32 // edge used to enter x, -1 oracle or root
		from Node
	}
	post := make([]Node, 0, n)
	var st []frame
	for r := range n {
		if color[r] != white || t.removed[r] {
			continue
		}
		st = append(st[:0], frame{x: Node(r), via: -1})
		color[r] = grey
		for len(st) > 0 {
			f := &st[len(st)-1]
			next, via := Node(-1), int32(-1)
			for f.ei < len(t.out[f.x]) && next < 0 {
				e := t.out[f.x][f.ei]
				f.ei++
				next, via = t.edges[e].to, e
			}
			for next < 0 && f.yi < n {
				y := Node(f.yi)
				f.yi++
				if y != f.x && !t.removed[y] && color[y] != black && t.oracle.Reaches(f.x, y) {
					next, via = y, -1
				}
			}
			if next < 0 {
				color[f.x] = black
				post = append(post, f.x)
				st = st[:len(st)-1]
				continue
			}
			switch color[next] {
			case black:
				continue
			case grey:
				// Cycle: next ... f.x -> next. Collect the literal edges;
				// hops the oracle covers cost nothing.
				out := t.confl[:0]
				if via >= 0 && !t.oracle.Reaches(f.x, next) {
					out = t.appendNeg(s, out, via)
				}
				for i := len(st) - 1; i > 0 && st[i].x != next; i-- {
					fr := st[i]
					if fr.via >= 0 && !t.oracle.Reaches(fr.from, fr.x) {
						out = t.appendNeg(s, out, fr.via)
					}
				}
				t.confl = out
				s.stats.TheoryConflicts++
				return out
			}
			color[next] = grey
			st = append(st, frame{x: next, via: via, from: f.x})
		}
	}
	// Reverse postorder is a topological order; removed nodes go first.
	t.oracleOrder = t.oracleOrder[:0]
	for r := range n {
		if t.removed[r] {
			t.oracleOrder = append(t.oracleOrder, Node(r))
		}
	}
	for i := len(post) - 1; i >= 0; i-- {
		t.oracleOrder = append(t.oracleOrder, post[i])
	}
	return nil
}

// Package solver is an incremental CDCL(T) SAT solver whose theory is
// acyclicity of a directed graph: edges are attached to literals and every
// model must leave the present edges acyclic. It is the back end of the
// checker (ARCHITECTURE.md): a transaction is a node, a
// dependency whose existence is unknown is an edge on a literal, one
// variable may carry a whole edge set (Vbox §3.5), and a derived
// anti-dependency is an edge on the conjunction of a read-from choice and
// a version order (AddEdge2; VeriStrong's Φ_RW, "conditions imply edge").
//
// The package does no IO and has no global state. A Solver is not safe for
// concurrent use.
//
// # Naming
//
//	Var          v, w      variable, 0-based
//	Lit          p, q      literal (also a, b for the literals of an edge)
//	Node         u, x, y   theory node
//	cref         c         clause reference: offset in the arena
//	edge id      e, f      index in theory.edges
//	trail index  k, lim    position on the trail
//	level        lvl, bt   decision level; 0 is the root
//
// # Literals
//
// Lit(2v) is v and Lit(2v+1) is ¬v, so p.Not() is p^1 and per-literal
// tables (values, watch lists, edges of a literal) are indexed by the
// literal itself. DIMACS() maps v to v+1 and ¬v to -(v+1).
//
// # Clause layout
//
// All clauses live in one []Lit arena; a cref is the index of a 3-word
// header (clause.go): size, flags|LBD<<8, activity (float32 bits, or the
// forwarding cref during GC), then the literals. Deleting a clause only
// flags it; the arena is compacted (maybeGC) once a quarter of it is dead,
// and every reference is relocated.
//
// # Watches and propagation
//
// watches[p] lists the clauses that watch p, visited when p becomes false;
// each watcher carries a blocker literal whose truth lets propagation skip
// the clause without touching it.
//
//	W1: an attached clause is watched by exactly its literals 0 and 1.
//	W2: at a propagation fixpoint, a watched literal is false only if the
//	    other watch is true, or all other literals are false (conflict).
//	    Opt-in chronological backtracking (Options.ChronoThreshold) may
//	    leave a learned clause unit but unpropagated after a later
//	    backjump; it still reports its conflict when the last watch
//	    falls, so models stay correct.
//	A1: reason[v] of an assigned v is crefUndef (decision, assumption or
//	    level-0 fact), crefTheory (implied by the theory, explained on
//	    demand) or a clause whose literal 0 is v's literal and whose other
//	    literals are false and earlier on the trail.
//	A2: level-0 facts are never explained; simplify, RemoveNode and
//	    Compact clear their reasons, so reason clauses of level-0 facts
//	    may be deleted (this is how theory facts through a removed node
//	    "become unit clauses": they stay on the level-0 trail).
//	C3: after a GC no reference to a deleted clause remains.
//
// Search is minisat-style: 1-UIP learning with recursive clause
// minimization, EVSIDS (activity decay 0.95, heap ordered by activity then
// index), Luby restarts (unit RestartBase) with partial trail reuse (a
// restart keeps the decision levels whose variables are more active than
// the next decision), phase saving, glucose-style
// reduction (every ReduceBase+k*ReduceInc conflicts, delete half of the
// learned clauses by LBD then activity, keeping LBD <= 2 and reasons).
// Assumptions are the first decisions; FailedAssumptions is minisat's
// analyzeFinal. A learnt unit at a deep level undoes that level only and
// is pushed as a decision in its place until the search next stands at
// level 0, where it becomes a fact (lazy units, burst34_lazyunit.go: a
// backjump to level 0 per unit re-decided the whole window each time). Determinism: no map iteration and no time source on any
// search path; Options.Seed only perturbs initial activities.
//
// Seed 0 adds no jitter: variables no conflict has bumped are decided in
// index (creation) order. On checker instances that matters more than it
// looks: a cycle's literals belong to a region of the graph, and a caller
// that creates a region's variables together gets them decided at
// neighbouring levels, so a conflict backjumps over that region only. With
// the jitter they sit at random levels and each backjump undoes a fixed
// fraction of the instance (generated 20K serializable history without
// timestamps: 2.43M decisions for 765 conflicts with jitter, 672K for 312
// without), which makes the cost per conflict grow with the instance.
//
// # Theory
//
// Edges come in three kinds: base (always present), single (present iff p)
// and conjunction (present iff p and q). The theory reads the trail after
// unit propagation reaches a fixpoint, through its own cursor (head):
// processing the literal at trail index k makes present every edge of that
// literal whose other literal, if any, is true earlier on the trail. The
// present subgraph is kept with a Pearce–Kelly dynamic topological order
// (ord/pos): inserting u->v with ord[u] > ord[v] searches forward from v
// and backward from u within the affected order interval and reorders
// only those nodes; reaching u is a cycle (VeriStrong Algorithm 1,
// THEORYSOLVE; Vbox §3.6).
//
//	T1: ord is a topological order of the present edges at all times.
//	T2: an edge is present iff its literals are true and the theory has
//	    processed the later of them; e.at is that trail index. Backtracking
//	    to trail length lim removes the edges with at >= lim (adjacency is
//	    a stack per node, so this is LIFO) and leaves ord alone: an order
//	    of a graph is an order of its subgraphs.
//	T3: a conflict is the negation of the literals on one cycle: the new
//	    edge plus a path found by 0-1 BFS (base edges cost 0), so cycles
//	    with the fewest literals are preferred. Conjunction edges
//	    contribute both literals, base edges none.
//	T4: theory propagation: after u->v becomes present, bounded searches
//	    collect descendants of v and ancestors of u (TheoryPropagationLimit
//	    nodes each); a non-present edge b->a from the first set into the
//	    second would close a cycle, so its literal (for a conjunction edge
//	    with one literal already true: the other) is set false with reason
//	    crefTheory. The reason clause is built lazily (explain) from a path
//	    a~>b over edges with at < the implied literal's trail index, which
//	    exist and stay present while that literal is assigned (T2); it is
//	    stored as a detached learned clause and freed once unlocked.
//
//	T5: pruning: when an edge is added (at level 0) and a bounded search
//	    (16*PruneLimit edge visits) finds a path back over present, hence
//	    permanent, edges, its literals get a level-0 lemma (¬p, or
//	    ¬p ∨ ¬q), kept as a learned clause so that it never blocks
//	    Retire (VeriStrong §6.1.1 applied edge by edge). The bounded
//	    search runs only after a snapshot index of the permanent edges
//	    (closure.Static, rebuilt when they double; reachindex.go,
//	    docs/SEMANTICS.md §3 "P1") failed to prove the path: a path of
//	    the snapshot is a path now, since permanent edges never leave
//	    at level 0.
//	T6: when the backward search of an insertion has collected more than
//	    an eighth of the interval [ord v, ord u] (at least 256 wide), the
//	    descendants of v alone move to the top of the interval, the
//	    other nodes of the interval keeping their order below them: one
//	    pass over the interval instead of both searches and a sort
//	    (theory_shift.go has the argument that T1 holds). A reader's edge
//	    to an unknown outcome that started long before it, on a burst,
//	    reordered thousands of nodes each way.
//
// Conflicts found by the theory always involve the current level, except
// those of the final check (below); handleConflict backtracks to the
// conflict's highest level first, so any clause of false literals can be
// analyzed.
//
// # Phase
//
// Decision polarity, first rule that applies:
//  1. SetPhase(v, b) wins.
//  2. If v carries edges and has no saved phase yet (or with
//     Options.AlwaysOrderPhase, at every decision), the order decides
//     (VeriStrong §6.2 generalized to edge sets): each of the first four
//     possibly present edges of p
//     (in the order they were added; a conjunction edge counts unless its
//     other literal is false) votes +1 for p if it points forward in the
//     current order (ord[from] < ord[to]) and -1 if backward;
//     score(v) = votes(v) - votes(¬v). Positive: true, negative: false.
//     An edge set pointing both ways thus follows the majority of its
//     first edges (add the defining edge first); a tie falls through.
//  3. The saved phase, else false.
//
// Recomputing the order's vote at every decision (VeriStrong's literal
// reading) cost a quarter of the solving time on checker instances with
// 500K variables, where long backjumps re-decide tens of thousands of
// variables per conflict, for no fewer conflicts; after the first
// decision the saved phase is the order's answer or what propagation
// forced, which is the better guess.
//
// With Options.Reanchor every restart recomputes the order at level 0 as
// the topological order of the level-0 edges closest to node id order and
// forgets the saved phases of edge variables, so that the next descent
// follows the caller's node order again (a checker creates nodes in time
// order). Insertions reorder only what they must, but after a few
// conflicts the order of unrelated regions has drifted, the first phases
// of fresh variables follow the drift, and on 10K-transaction
// serializable histories search ran for minutes; re-anchored, the same
// instances took 19-5,795 conflicts.
//
// # Incrementality
//
// Variables, clauses, nodes and edges may be added between Solve calls;
// each mutation first backtracks to level 0. Learned clauses, activities
// and saved phases carry over.
//
// Selectors: to make a group of clauses removable, add ¬sel to each of them
// (sel from NewSelector), assume sel in every Solve that wants the group,
// and call RemoveSelector(sel) to drop it: sel is fixed false, so the
// group and every learned clause derived from it (they contain ¬sel) are
// satisfied and deleted at once. Edges of a group are attached with
// AddEdge2(p, sel) so that they die with it.
//
// Retire(v) is allowed once v is fixed at level 0, or when all clauses
// containing v are satisfied at level 0 and no edge that could still be
// present uses v. The purge is batched (Compact, called by NewVar/NewNode
// when at least 64 and an eighth of the indices are pending, or by the
// caller). R1: a retired index is handed out again only after Compact has
// removed every clause, watch, heap entry, phase, reason, edge and trail
// entry that mentioned it; learned clauses containing it are deleted
// (sound: a retired unfixed variable occurs in no live original clause, so
// its learned clauses are implied without it), edges on it become base
// edges (fixed true) or disappear (fixed false).
//
// RemoveNode(n) keeps reachability through n for permanent edges: for
// every base or level-0-true p->n and n->q it adds base p->q; all other
// edges touching n disappear at once; the id is reusable after Compact.
// It is meant for settled nodes (every edge touching n decided at level
// 0): learned clauses and lemmas stay, and they remain implied only then.
//
// # Probes from the saved model
//
// FlipKeepsModel (flip.go, F1) tests whether the saved model with one
// variable flipped is a model. With SetProbeFromModel on, a Solve with
// exactly one assumption first tries F2 (flip_prop.go): the assumption
// asserted over the level-0 trail and propagated, the saved model with
// the propagated values in place of its own, checked against the
// clauses and edges that change can break and against everything added
// since the model was saved, with the edges that go backward inserted
// into a copy of its order. A pass is a Sat answer with that model and
// order saved; anything else searches as before. F2 never answers Unsat
// (a conflict of the propagation is learnt from, as the search would).
//
// # Oracle
//
// SetBaseOracle adds base reachability that is not given as edges (the
// checker's closure). Inserting u->v consults Reaches(v, u) (a conflict of
// u->v's literals alone); cycles that alternate oracle pairs and present
// edges are found by a final check on every complete assignment that
// sorts present edges plus all oracle pairs (O(n²) Reaches calls; simple,
// not fast) and supplies Order. Theory propagation along newly reachable
// oracle pairs (Vbox Algorithm 1) is not implemented.
//
// # Tuning (measured on the checker's own instances)
//
// PruneLimit (default 256) matters most on serializable instances without
// real time: on a generated 8000-transaction history (83K variables) no
// pruning took 2.7K conflicts, 64 nodes 745, 256 nodes 495, 1024 nodes
// 447 (encode time grows with it). Counting edges rather than nodes (a
// writer read by thousands has thousands of present edges) cut a 2K
// serializable history with 229K pairs from 7.4 s to 2.4 s of encoding
// and 1.4 s to 0.85 s of search; a budget of PruneLimit edges saved more
// encoding but lost pruning the search needed (31.8 s, 4x the conflicts). TheoryPropagationLimit (default 32)
// cuts conflicts by 10-100x on the theory benchmarks with misleading
// initial orders, but costs time when the order is already good
// (BenchmarkTheory, order=time). Random 3-SAT (n=200, ratio 4.26): median
// CPU time within 1.1x of minisat 2.2 on the same files.
//
// # Base edges
//
// AddBaseEdge skips an edge equal to one of the last 16 present edges
// leaving its source (a caller's repeats come in a row); an older
// duplicate is kept as a redundant present edge, which changes no answer.
// A set of every base edge cost ~100 MB at 100K checker transactions.
// Reserve(nodes, edges) is a capacity hint for callers that know their
// instance's size. Recycle(old, opts) is New(opts) on the arrays of a
// solver no one uses any more (recycle.go, R1: every answer as a fresh
// solver's), for a caller that builds an instance per step.
//
// # Complexity
//
// Unit propagation is linear in the watch lists visited; analysis is
// linear in the trail. Edge insertion costs O(1) when it agrees with the
// order, else O(δ log δ) for the affected region δ (Pearce–Kelly); theory
// propagation at most O(limit) nodes plus their candidate edges per
// insertion; an explanation is a 0-1 BFS over present edges. Memory:
// O(clauses + learned) arena words, O(vars + nodes + edges) tables.
//
// # References
//
// VeriStrong (papers/000) Algorithm 1, §6.1.2 (2-width cycles are the
// caller's business), §6.2 (polarity); Vbox (papers/001) §3.5 (one variable
// per edge set), §3.6 (propagation and analysis); Pearce and Kelly, "A
// Dynamic Topological Sort Algorithm for Directed Acyclic Graphs" (JEA
// 2006); Eén and Sörensson, "An Extensible SAT-solver" (SAT 2003);
// Audemard and Simon (glucose LBD, IJCAI 2009).
package solver

// Package closure keeps the transitive closure of the checker's known graph
// (inserted dependency edges plus, under a real-time level, time edges) in
// Vbox's compact form (Vbox §3.4): only pairs of overlapping transactions
// are stored, everything else is answered from timestamps. Unlike Vbox it
// works on a stream: transactions are appended in start order, edges are
// added one at a time (Italiano+, §3.4.3), transactions that left the
// window are evicted without losing any reachability among the rest
// (docs/SEMANTICS.md §5 R5), and the band slides with them. Build is the batch
// constructor (Purdom+, §3.4.2 Algorithm 2). The package does no IO and has
// no goroutines; a Closure is not safe for concurrent use.
//
// # Model
//
// Transactions are numbered by absolute sequence ID (Append's result, never
// reused). Each has an adjusted interval [s, e] = [start-Δ, effectiveEnd+Δ]
// (IntervalOf computes it from a history.Txn and history.Options);
// e = math.MaxInt64 means it never ends (an unknown outcome without an
// in-doubt horizon), called unbounded below. Under Options.RealTime, i
// precedes j in time iff e_i <= s_j and not e_j <= s_i, exactly
// history.Options.Precedes: two zero-length transactions ("points") at one
// instant are concurrent, while a point at t precedes a transaction that
// starts at t with positive length, even one appended before it. This time
// order is an interval order, hence transitive. Reaches(u, v) is
// reachability over inserted edges plus time edges in the full graph, the
// evicted transactions included: eviction changes what can be asked, never
// the answer. Without RealTime there are no time edges and every row spans
// every transaction.
//
// # The band
//
// Vbox stores row i over l_i..r_i, the first and last transactions in start
// order that overlap i. Here, with absolute IDs:
//
//   - lo_i, the band's left end, is the first live bounded transaction that
//     had not ended before s_i when i was appended. Every bounded y < lo_i
//     ended before s_i, so it precedes i and i cannot reach it.
//   - The right end is not stored. d_i, the earliest end among everything
//     i reaches (i itself and evicted transactions included), says that i
//     reaches every transaction that some descendant precedes: every y with
//     s_y > d_i, and those with s_y == d_i unless only points end at d_i and
//     y is a point. Since d_i <= e_i, this covers every y after Vbox's r_i,
//     so bits are needed only for IDs whose start is <= d_i. This is Vbox's
//     d_i (Algorithm 2) made persistent; it is what makes a transaction
//     appended after i's descendants were evicted reachable from i.
//
// A row is a bits-and-blooms bitset whose bit k stands for ID off+k (off a
// multiple of 64), so rows of different transactions OR word by word.
//
// Unbounded transactions are kept out of the band arithmetic: they never
// become the front that lo is taken from, so one of them does not widen
// every later band for ever (it would: it overlaps everything after it).
// Instead each row keeps a sparse list (uset) of the unbounded transactions
// it reaches that d does not imply, and each unbounded transaction keeps the
// reverse index (col) for Italiano's source search. An unbounded row is an
// ordinary row: empty while it reaches no bounded transaction (d = +∞), and
// bounded by its d after. The cost is O(live unbounded) per AddEdge and per
// row that reaches them, instead of O(stream length) per band.
//
// # Invariants
//
//   - I1 IDs grow by one per Append. Under RealTime starts are
//     non-decreasing in ID (Append panics otherwise), so "IDs whose start is
//     <= t" is a prefix found by binary search. Slots live in chunks of 256
//     IDs; an evicted slot keeps its interval until its whole chunk is
//     evicted, then the chunk is freed and only its first and last start
//     remain (a search answer inside a freed chunk may be off by evicted
//     IDs, which no scan visits). A transaction pinned for ever therefore
//     holds one chunk, not every slot after it.
//   - I2 For every live x and every bounded y < lo_x, y precedes x in time.
//   - I3 d_x is the earliest end among x and everything x reaches in the full
//     graph; fDNP says whether a non-point ends at d_x. dReaches(x, y) holds
//     iff some descendant-or-self of x precedes y in time.
//   - I4 a_x is the latest start among x and everything that reaches x in the
//     full graph; fANP says whether a non-point starts at a_x. A transaction
//     appended later reaches an existing one without any new edge only in
//     the equal-start corner (a point preceding an ancestor that starts at
//     the same instant); a tells that at Append.
//   - I5 For live x != y: x reaches y iff, for bounded y, y >= lo_x and (bit y
//     of row x or dReaches(x, y)); for unbounded y, dReaches(x, y) or y is in
//     uset_x. This is exact (it equals the full graph's reachability).
//   - I6 The graph stays acyclic: AddEdge refuses an edge that closes a cycle
//     and Build returns the cycle instead of a closure.
//   - I7 The live graph (arcs: inserted edges between live transactions and
//     derived arcs through evicted ones; time edges; one exit proxy per
//     transaction, the earliest-ending evicted transaction it reaches
//     through evicted ones only; one entry proxy, the latest-starting
//     evicted transaction reaching it through evicted ones only) has the
//     same reachability among live transactions as the full graph, and each
//     of its hops expands to a chain of full-graph edges whose inner
//     transactions are the evicted ones listed in Via, in path order.
//
// Eviction keeps I5 for free (rows already hold every fact among live
// transactions, and d and a already include the evicted one) and restores
// I7 by contracting the evicted transaction T: every in-arc p->T and out-arc
// T->s give a derived arc p->s; an in-arc offers p an exit proxy (T, or T's
// own exit proxy if it ends earlier), an out-arc offers s an entry proxy. A
// single proxy suffices because the earliest-ending (latest-starting) one
// reaches a superset. The other combinations (time into T then time out of
// it, and so on) are implied by transitivity of the interval order. Stale
// bits of evicted columns stay in rows (IDs are never reused) and are never
// reported.
//
// # Operations and complexity
//
// d is the average band width (overlap), k the number of live unbounded
// transactions, n the live transactions, W = d/64 words.
//
//   - Append: O(1) amortized (advancing the front); O(d) for a point
//     transaction (I4 corner). The new column needs no bits: d answers it.
//   - AddEdge(u, v): sources are the live a with a == u or a reaching u, not
//     reaching v. Lemma 3.6 restated for this band: a >= lo_v (smaller ones
//     precede v, I2) and s_a <= d_u (larger ones are reached by u), plus
//     unbounded ones and, for unbounded u, col_u. For each source, the
//     targets (Lemma 3.7's role) are v, the bits of row v up to a's own d
//     (one word OR per W), v's uset, and the transactions starting in
//     [d_v, d_a] (those a now reaches through v's earliest-ending
//     descendant). O(d·(1 + W + k)) plus the output, versus Italiano's
//     O(n) per edge amortized. The result lists every newly reachable pair
//     of live transactions: such a pair is always concurrent (an ordered
//     pair is reachable from the start, or never), so this is the band
//     restriction Vbox's Algorithm 1 consumes. Pairs with transactions
//     appended later are never "newly"; they are born reachable.
//   - Reaches: O(1) for bounded targets, O(k) for unbounded ones.
//   - Path: O(L·(deg + d + p)) for a path of L hops, p the transactions
//     holding an entry proxy.
//   - Evict(T): O(in(T)·out(T) + deg(T) + k).
//   - Build: phase 1 O(|V| + |E| α) (time successors through a skip list of
//     unvisited IDs), then a check of the order against every edge and, by
//     a sweep, every time edge. Phase 2 O(|V|·d·W + |E|·W): each row is the
//     OR of its inserted successors' rows and of its minimal time
//     successors', those starting no later than the earliest end among all
//     its time successors (Vbox's r_{m_i}).
//
// Memory: one row of at most about d bits per transaction plus a fixed slot
// of 144 bytes and 16 bytes per arc end (48 more for the rare fields of
// unbounded transactions and proxies): O(n·d), not O(n²). Without RealTime
// rows are O(n) each, as they must be.
//
// # Where this departs from Vbox
//
//   - Absolute IDs and implicit right ends, so the band slides: appending
//     touches no row; eviction touches no row.
//   - d is kept per transaction for ever (Vbox computes d_i only inside
//     Algorithm 2), with a flag for the equal-instant corner, and a,
//     Vbox's missing mirror image, handles the equal-start corner.
//   - No path matrix (§3.4.4). Path walks the live graph guided by the
//     exact rows: from x it takes any hop to a transaction that still
//     reaches v; the graph is acyclic, so the walk ends. A matrix would cost
//     a word per band entry and every eviction would invalidate entries
//     that pass through the evicted transaction.
//   - Unbounded transactions (not in Vbox, whose histories have no unknown
//     outcomes) get the sparse treatment above.
//   - Build finds a cycle by checking its topological order against every
//     edge; to explain a cycle it replays the edges incrementally, which
//     stops at the first edge that closes one.
//   - A transaction does not reach itself (Vbox's D(v) contains v).
//
// # Static: reachability without timestamps
//
// Static (static.go) is the offline pruning loop's index (docs/SEMANTICS.md
// §3, "Pruning by reachability without timestamps (V1)"): a fixed DAG
// whose band is taken over a topological order instead of over time, with
// landmarks for pairs beyond it. Unlike Closure it is sound but not
// complete: Reaches is true only on a proven path (exact within the band);
// a false may be a missed path, which a pruning rule must read as "not
// decided". Memory n·(W + 2·L/64) words, W = 64 (16 above 250,000 nodes),
// L <= 512 landmarks. TopoOrder is its topological sort (smallest node
// first), also used to lay out the solver's nodes along the forced reads.
//
// References: Vbox §3.4.1-3.4.4 (papers/001), Purdom 1970, Italiano 1986
// (Vbox [18]); docs/SEMANTICS.md §1 (time order), §5 (window, R5).
package closure

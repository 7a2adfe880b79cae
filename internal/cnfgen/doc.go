// Package cnfgen generates benchmark and test formulas for the solver as
// *solver.CNF values: random k-SAT, pigeonhole, parity chains, graph
// coloring, and acyclicity-theory families that use the edge extension of
// solver/dimacs.go. ExpandAcyclicity turns a formula with edges into plain
// clauses, so that a reference solver without the theory (minisat) can
// decide it too.
//
// # Model
//
// Every generator is a pure function of its parameters and a uint64 seed. The
// random source is a local SplitMix64 (Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014) with Lemire's multiply-shift
// bound, written here so that the instances (and thus the benchmark figures
// quoted in BENCHMARKS.md) cannot change with the Go release, as
// math/rand/v2's helper methods are not promised stable.
//
// # Invariants
//
//	G1. Same parameters and seed give the same formula, byte for byte once
//	    written with solver.WriteDIMACS.
//	G2. Every formula passes (*solver.CNF).Validate.
//	G3. Families with a known answer hold to it: Pigeonhole and the unsat
//	    Parity are unsatisfiable; planted Coloring, the sat Parity and planted
//	    Polygraph are satisfiable (the planted assignment is a witness).
//	G4. ExpandAcyclicity(c) is satisfiable iff c is, and the restriction of any
//	    model of it to c's variables is a model of c.
//
// # Complexity
//
// Linear in the output size, except ExpandAcyclicity, which writes
// n(n-1)/2 order variables and n(n-1)(n-2) transitivity clauses for n nodes:
// meant for graphs of at most a few dozen nodes.
//
// # References
//
// Pigeonhole: Haken, "The intractability of resolution" (1985), the classic
// hard family for resolution and hence CDCL. Random 3-SAT at clause/variable
// ratio 4.26: the satisfiability threshold (Mitchell, Selman, Levesque 1992;
// Crawford, Auton 1996), where instances are hardest. Parity chains: Tseitin
// encodings of XOR, hard for resolution when the two chains order the
// variables differently (Urquhart 1987). Polygraph: the constraint shape of
// VeriStrong §4 and Vbox §3 (one variable choosing between two edge sets;
// read-from and version order jointly implying an anti-dependency, the `e2`
// line, VeriStrong's Φ_RW).
package cnfgen

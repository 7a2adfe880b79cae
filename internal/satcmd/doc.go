// Package satcmd implements `streamcheck sat`: decide a DIMACS CNF file
// (plain or gzip, optionally with the edge extension of solver/dimacs.go)
// with streamcheck's CDCL(T) solver and answer in the SAT competition
// format, so the solver can be checked and timed against reference solvers
// such as minisat on the same files.
//
// # Model
//
// One run reads one formula, loads it into a fresh solver.Solver
// (solver.CNF.Load), calls Solve once under the timeout, and prints:
//
//	c <statistics>            comment lines, any number
//	s SATISFIABLE             exit 10, followed by the model:
//	v 1 -2 3 ... 0            lines of at most 80 bytes, variables 1..V
//	s UNSATISFIABLE           exit 20
//	s UNKNOWN                 exit 0: timeout or cancellation
//
// Errors (usage, unreadable or malformed input) print one message on stderr,
// no status line, and exit 1.
//
// # Invariants
//
//	S1. The exit code always matches the status line (10/20/0), and 1 comes
//	    with no status line.
//	S2. A printed model satisfies the formula: it is checked with
//	    solver.CNF.Verify, which is independent of the solver, before it is
//	    printed; a failed check is an internal error (exit 1), never an answer.
//	S3. The timeout is wall clock from the start of the run, parsing
//	    included, as SAT competitions count it.
//
// # Complexity
//
// Parsing, loading and model checking are linear in the file; the rest is
// the solver's search.
//
// # Testing
//
// minisat_test.go compares the answers with minisat on 200+ generated
// formulas (internal/cnfgen), theory formulas through
// cnfgen.ExpandAcyclicity; TestMinisatRatio is the timing harness (see its
// comment for the command).
package satcmd

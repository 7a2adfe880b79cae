// Package checkcmd is `streamcheck check`: it parses the flags, reads a
// history, runs incremental.Check and renders the result with
// internal/report. It holds the command's wiring only; deciding is
// incremental's job and rendering report's.
//
// # Usage
//
//	streamcheck check [flags] FILE
//
// FILE is a path (native JSON Lines, Jepsen/Elle EDN or JSON, detected from
// content, gzip detected by magic bytes), "-" for standard input, or
// example:NAME for a history bundled in the binary (cmd/streamcheck/
// examples/NAME.*; `streamcheck help` lists them). The example: prefix was
// chosen over an --example flag so that examples compose with every other
// flag exactly like a file (`check --format json --dot g example:write-skew`);
// a real file of that name is reached as ./example:NAME.
//
// Flags may come before or after FILE. --skew and --indoubt take a Go
// duration (1ms) or an integer number of nanoseconds, the unit of history
// timestamps; --indoubt also takes none (+∞, the default).
//
// # Invariants
//
//	C1 Exit status: 0 valid, 1 anomaly, 3 unknown, 2 usage, input or output
//	   error; an error wins over an anomaly, which wins over unknown. The
//	   rule is cliutil.Outcome.ExitCode, which run shares at the end of its
//	   input. An input with no transactions (empty, blank, an Elle history
//	   of nemesis operations only) is an input error, never VALID.
//	C2 An input error (malformed line, missing timestamps under a real-time
//	   level, unsupported level) prints one message naming the position and
//	   field and no verdict: nothing is half-checked, because ingest
//	   validates the whole history before the check starts.
//	C3 Every verdict line names the options checked (report T1); the JSON
//	   report is exactly one report.Report object.
//	C4 --timeout is a promise: when the checker overruns it (it polls its
//	   context only between solver steps), the command stops waiting after
//	   a grace period of 1s + 5% and reports unknown.
//	C5 --witness is written only for a valid verdict and before the report,
//	   so the report never names a file that is not there.
//	C6 Progress goes to stderr only with --progress (default: stderr is a
//	   terminal) and stops before the report is written.
//
// # Tests
//
// checkcmd_test.go runs Main in process against the brute-force oracle
// (internal/oracle) on random tiny histories with random options: the
// verdict, every core (oracle.CheckCore) and every witness file
// (oracle.ReplayWitness) must agree. The command's end-to-end behaviour
// (exit codes, formats, stdin, gzip, errors) is specified by the scripts in
// cmd/streamcheck/testdata/script.
package checkcmd

// Package verdict holds the result types every checker produces and every
// consumer reads: an anomaly (its type, Adya class, minimal core, the core
// transactions as recorded, the forced orders and the cycle with each
// edge's evidence), the work figures of a check (Stats) and an alert of the
// online engine (Alert: an anomaly plus its id, levels and timing).
//
// # Why a package of its own
//
// The types used to live in internal/report, which imports the SAT engine
// (incremental) to build them. That made the public alerts package import
// an internal one: its Sink interface named an internal type, so nobody
// outside the module could write a sink, and a sink depended on the solver.
// Here the types sit below both sides (go/types.Error and pebble's base
// package are the models): checkers (incremental today, a polynomial
// checker for a weaker level later) build them, internal/report renders
// them (text, JSON, DOT, SVG) and alerts delivers them. The package imports
// only history (for the way times are printed) and the standard library.
//
// # Invariants
//
//	V1 The JSON encoding of these types is the schema of
//	   `check --format json` and of the alert stream; it only grows
//	   (internal/report's R1 and its golden file pin it).
//	V2 verdict imports no streamcheck package but history, and alerts
//	   imports no internal/ package (alerts' TestNoInternalImports); an
//	   example sink outside the module (examples/sink, built by
//	   TestExampleSinkBuilds) compiles against these types.
//
// internal/report keeps type aliases (report.Alert = verdict.Alert, ...)
// so that its callers did not change.
package verdict

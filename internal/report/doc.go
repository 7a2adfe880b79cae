// Package report renders a checker's result for people and programs: a
// text report, one JSON object (the schema the online engine and the alert
// sinks reuse) and one drawing per anomaly: NewGraph is the model, DOT
// writes it for Graphviz (`check --dot`) and SVG draws it for the status
// page, so both show the same graph.
//
// # Model
//
// New turns an incremental.Result and the history it came from into a
// Report, a plain value of exported, JSON-tagged types. The anomaly and
// alert types it is made of (Anomaly, Txn, Step, Stats, Alert) are defined
// in the public package verdict and aliased here: report builds and
// renders them, alerts delivers them without importing report. Every renderer
// reads only the Report, so the text, JSON and DOT outputs cannot disagree
// about a verdict, and a Report decoded from JSON renders like the
// original. A Report carries the core transactions as recorded (their
// operations in history.ParseCompact notation and their file:line), so a
// reader can check an anomaly without the input file.
//
// # Invariants
//
//	R1 The JSON schema only grows: fields are never renamed or retyped, and
//	   consumers ignore unknown fields. testdata/report.golden.json pins the
//	   field names; a change to it is an API change.
//	R2 "valid" is true, false or null exactly for the verdicts valid,
//	   invalid and unknown; "indoubt_ns" is null exactly for the +∞ horizon
//	   (history.NoInDoubt); lists are [] rather than null.
//	T1 The text verdict line always names the level, skew, in-doubt horizon
//	   and initial state checked (issue #4): a verdict is only meaningful
//	   under its options.
//	T2 Outputs for people (text, DOT, SVG, the status page through
//	   Txn.Readable) show client times with history.FormatTime and
//	   FormatInterval (RFC 3339 for wall-clock nanoseconds, the number for
//	   offsets) and spans as durations; JSON and the compact notation keep
//	   the numbers, so that programs and history.ParseCompact read them.
//	D1 DOT output is a deterministic function of the Anomaly. The two
//	   edges of a two-transaction cycle leave and enter by opposite sides
//	   of the boxes (west, east), so that Graphviz sets their labels apart.
//	D2 DOT node names are synthetic (t0, t1, ...); user strings (ids, keys,
//	   values) appear only inside escaped labels, so no input can break the
//	   graph's syntax. The tests check this with Graphviz itself when it is
//	   installed: the SVG text must give back every id verbatim.
//
// # Complexity
//
// New is O(|H| + size of the anomalies) (one id index over the history);
// the renderers are linear in the size of the report.
//
// # References
//
// Adya's phenomena (G0, G1c, G-single, G2; Adya's 1999 thesis) name the
// classes; the explanation sentences follow Elle (Kingsbury & Alvaro, VLDB
// 2020); a core is minimal under the projection of docs/SEMANTICS.md §3. The
// steps themselves come from incremental (its doc.go, "Cores").
package report

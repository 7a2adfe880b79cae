// Package gencmd is `streamcheck gen`: it writes a history from package
// gen as native JSON Lines (ingest.AppendNative, one transaction a line,
// in end-time order) to stdout or -o FILE, and the injected anomalies as
// a JSON array of {type, class, txns} to stderr or --manifest FILE.
//
// Flags start from the --workload preset (gen.Preset: mixed, blindw-rh,
// blindw-rw, blindw-wh); each flag given explicitly overrides its knob, so
// a ratio left out keeps the preset's value rather than a flag default.
// Streaming: memory does not grow with --txns (gen.GenerateStream), so
// 10M-transaction files are produced at disk speed.
//
// Exit codes: 0 written, 1 output or manifest could not be written, 2 bad
// flags or configuration.
package gencmd

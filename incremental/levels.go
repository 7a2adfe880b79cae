package incremental

import "github.com/streamcheck/streamcheck/history"

// The levels the engine checks beyond the one it was asked for are
// questions to the registry and its lattice (history/lattice.go), not
// constants, so that a level added to the registry gets the same treatment
// without an edit here.

// OnlineLevel is the level the online engine checks whatever the promise:
// the strongest checked level, which orders by real time, because real
// time is what lets the window release and evict transactions (Vbox
// Theorem 3.5; docs/SEMANTICS.md §5). An alert that needs real-time edges
// is flagged NeedsRealtime when the promised level has no real time.
var OnlineLevel = func() history.Level {
	top, ok := history.Strongest()
	if !ok || !top.RealTime() {
		panic("incremental: the registry has no strongest real-time level for the online engine")
	}
	return top
}()

// WitnessLevel is the level of the pre-check that tries a stricter level
// first (stricterFirst): the weakest checked level that orders by real time
// and implies lv. Its witness, when one exists, is a witness for lv too.
// For a level with real time it is lv itself. In the snapshot-isolation
// family it is the level whose real time orders snapshots (strong SI):
// there time settles most orders and prunes most sources (encode_si.go),
// where under GSI it orders commits only.
func WitnessLevel(lv history.Level) history.Level {
	for _, d := range history.Levels() {
		if d.Level.RealTime() && d.Level.Implies(lv) && (!lv.BeginCommit() || d.Level.SnapshotRealTime()) {
			return d.Level
		}
	}
	return lv
}

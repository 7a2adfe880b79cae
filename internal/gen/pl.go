package gen

import "github.com/streamcheck/streamcheck/history"

// ValidAt shapes for Adya's repeatable-read and pl-2+ (issue 26), as sets
// of the shapes inject already builds (si.go's shapeSets): each shape a
// minimal core at the levels it violates, together violating every
// checked level the asked one does not imply.
//
//	repeatable-read  serializable's set (SessionStaleRead + StaleOverwrite)
//	pl-2+            LongForkShape + SessionStaleRead
//	causal           LongForkShape + LostUpdate
//
// repeatable-read is serializable on histories without predicate reads
// (history.SameOnItems), so it takes serializable's set.
//
// pl-2+ allows cycles with two or more anti-dependencies. A shape valid
// there and invalid at snapshot isolation needs two rw edges that are not
// adjacent, so four transactions: the long fork. It has no session order,
// so a session stale read (valid at pl-2+) sets it apart from read atomic
// and causal.
//
// causal's long fork alone is valid at pl-2+, which causal does not imply
// (pl-2+ forbids lost updates; causal, without conflict detection, allows
// them), so its set gains a lost update.
func init() {
	shapeSets["pl-2+-shapes"] = []string{LongForkShape, SessionStaleRead}
	shapeSets["causal-shapes"] = []string{LongForkShape, history.LostUpdate}
	allowedShapes[history.RepeatableRead] = "serializable-shapes"
	allowedShapes[history.PL2Plus] = "pl-2+-shapes"
	allowedShapes[history.Causal] = "causal-shapes"
}

// setTxns is the number of transactions of this file's sets (the oracle's
// MaxTxns leaves the rest for the base), 0 for any other entry.
func setTxns(typ string) int {
	if typ == "pl-2+-shapes" || typ == "causal-shapes" {
		return 6
	}
	return 0
}

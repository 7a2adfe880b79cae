package history

// Anomaly type names, as Elle and Adya spell them. A checker reports the
// most specific name it can prove (a recognised pattern such as LostUpdate)
// and, separately, the Adya class of the final cycle. Classes found by
// search take the suffix RealtimeSuffix or ProcessSuffix when their cycle
// needs real-time or session-order edges (Elle's convention).
const (
	// Found without search.
	GarbageRead       = "garbage-read"       // a value nobody wrote
	G1a               = "G1a"                // a read of an aborted write
	G1b               = "G1b"                // a read of another transaction's non-final write
	Internal          = "internal"           // a read disagreeing with its own transaction's earlier write
	DuplicateElements = "duplicate-elements" // a list element occurs more often than it was appended
	IncompatibleOrder = "incompatible-order" // two list reads neither of which is a prefix of the other

	// Adya classes of the final cycle.
	G0           = "G0"            // write cycle (ww only)
	G1c          = "G1c"           // ww and wr only
	GSingle      = "G-single"      // exactly one rw
	GNonadjacent = "G-nonadjacent" // several rw, none adjacent
	G2Item       = "G2-item"       // adjacent rw edges

	// Patterns with a familiar name, reported as the type when the core
	// matches them exactly.
	LostUpdate = "lost-update" // two transactions read one version of k and both write k
	WriteSkew  = "write-skew"  // two transactions, each overwrites what the other read
	ReadSkew   = "read-skew"   // a reader sees one writer's effect on one key but not on another

	RealtimeSuffix = "-realtime"
	ProcessSuffix  = "-process"
)

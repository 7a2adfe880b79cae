package history

// StrictSerializable is serializable with session order and real time:
// a transaction that ended before another began comes first.
const StrictSerializable Level = 2

var strictSerializable = LevelInfo{
	Level:   StrictSerializable,
	Name:    "strict-serializable",
	Meaning: "strong-session-serializable, and a transaction that ended before another began (client clocks widened by --skew) comes first",
	Definition: "strong-session-serializable, with real-time order (i before j iff " +
		"end_i+Δ <= start_j-Δ, Options.Precedes) among the orders the serial order extends",
	Reference: "Adya 1999 §4.2 (PL-SS); Herlihy & Wing 1990 for real-time order; " +
		"docs/SEMANTICS.md §1 for the skew Δ and the in-doubt horizon",
	Orders: OrderSession | OrderRealTime,
	Forbids: append(append([]string(nil), strongSessionSerializable.Forbids...),
		G0+RealtimeSuffix, G1c+RealtimeSuffix, GSingle+RealtimeSuffix, GNonadjacent+RealtimeSuffix, G2Item+RealtimeSuffix),
	Backend: BackendSAT,
	Online:  true,
}

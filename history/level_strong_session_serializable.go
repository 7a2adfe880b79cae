package history

// StrongSessionSerializable is serializable with each session's
// transactions in session order.
const StrongSessionSerializable Level = 1

var strongSessionSerializable = LevelInfo{
	Level:   StrongSessionSerializable,
	Name:    "strong-session-serializable",
	Meaning: "serializable, and the order keeps each session's transactions in session order",
	Definition: "serializable, with the session order among the orders the serial order " +
		"extends: the serialization graph with process edges has no cycle",
	Reference: "Daudjee & Salem, Lazy Database Replication with Ordering Guarantees, ICDE 2004, §3 " +
		"(strong session 1SR); Elle's strong-session-serializable",
	Orders: OrderSession,
	Forbids: append(append([]string(nil), serializable.Forbids...),
		G0+ProcessSuffix, G1c+ProcessSuffix, GSingle+ProcessSuffix, GNonadjacent+ProcessSuffix, G2Item+ProcessSuffix,
		// Session order makes it imply read atomic and causal (lattice.go).
		FracturedRead, CausalityViolation),
	Backend: BackendSAT,
	Online:  true,
}

package history

// SnapshotIsolation is Adya's SI: every transaction reads from a snapshot
// taken when it began and commits only if no transaction that committed
// since then wrote a key it writes. No session order, no real time.
const SnapshotIsolation Level = 3

// siForbids are the classes every level of the snapshot-isolation family
// forbids: a cycle without two adjacent anti-dependencies (Cerone &
// Gotsman 2016, Theorem 9). G2-item with adjacent rw edges (a write skew)
// is allowed.
var siForbids = []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder,
	G0, G1c, GSingle, GNonadjacent}

var snapshotIsolation = LevelInfo{
	Level:   SnapshotIsolation,
	Name:    "snapshot-isolation",
	Meaning: "each transaction reads one snapshot taken when it began; concurrent transactions write disjoint keys (write skew allowed)",
	Definition: "some order of the begin and commit events of the committed transactions " +
		"(B_t before C_t) in which every read of t sees the last version committed before B_t " +
		"(own writes first) and no two transactions that write a common key overlap: the " +
		"BC-polygraph (wr C_w->B_r, ww C_a->B_b, rw B_r->C_b) has an acyclic compatible graph",
	Reference: "Adya 1999 §4.3 (PL-SI); Viper (Zhang et al., EuroSys 2023) §2.2 and §5 (BC-polygraphs); " +
		"Cerone & Gotsman, Analysing Snapshot Isolation, PODC 2016",
	Orders:  OrderBeginCommit,
	Forbids: siForbids,
	Backend: BackendSAT,
	Online:  false,
}

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

// Online (run, canary): package sionline checks strong-snapshot-isolation,
// the weakest level of the family with real time that implies this one
// (without real time no read closes); an alert that needs the assumed
// real time says needs_realtime (docs/SEMANTICS.md §5 "The window at the
// snapshot levels").
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
	Online:  true,
}

// OrderSnapshotRealTime, with OrderRealTime and OrderBeginCommit, says
// that real time orders a finished transaction's commit before a later
// one's begin (C_i -> B_j, strong SI: the snapshot includes it). Without
// it real time orders commits only (C_i -> C_j, GSI). A high bit, so that
// the constants of level.go's iota never meet it.
const OrderSnapshotRealTime Orders = 1 << 7

// BeginCommit reports whether the level splits each transaction into a
// begin and a commit node (the snapshot-isolation family).
func (l Level) BeginCommit() bool {
	return l.Supported() && l.Def().Orders&OrderBeginCommit != 0
}

// SnapshotRealTime reports whether real time orders C_i before B_j (strong
// SI) rather than C_i before C_j only (GSI). Meaningful for real-time
// levels of the family.
func (l Level) SnapshotRealTime() bool {
	return l.Supported() && l.Def().Orders&OrderSnapshotRealTime != 0
}

package verdict

import (
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Anomaly is one proven violation with everything a person needs to check
// it by hand: the core transactions as recorded and the cycle with each
// edge's kind and evidence.
type Anomaly struct {
	// Type is the most specific name (history.LostUpdate, ...); Class is
	// the Adya class of the final cycle (equal to Type when no familiar
	// pattern matched, or for anomalies found without search).
	Type  string `json:"type"`
	Class string `json:"class"`
	// Core lists the ids of a minimal violating set of transactions.
	Core []string `json:"core"`
	// Txns are the core transactions, in core order.
	Txns []Txn `json:"txns"`
	// Forced are the orders the core forces before its final cycle closes.
	Forced []Forced `json:"forced"`
	Cycle  []Step   `json:"cycle"`
	// Explanation is one sentence per forced order and per cycle step, in
	// the order a person would follow them.
	Explanation []string `json:"explanation"`
}

// Txn is a transaction as the input recorded it.
type Txn struct {
	ID      string `json:"id"`
	Session string `json:"session,omitempty"`
	Status  string `json:"status"`
	// Start and End are client timestamps in ns; absent when the input had
	// none.
	Start *int64 `json:"start,omitempty"`
	End   *int64 `json:"end,omitempty"`
	// Ops are the micro-operations in the compact notation of
	// history.ParseCompact ("r x 1", "append l 3", "r l [1 3]").
	Ops []string `json:"ops"`
	// Compact is the whole transaction in that notation; ParseCompact
	// reads it back.
	Compact string `json:"compact"`
	// Source is where the input recorded it ("file:line"), when known.
	Source string `json:"source,omitempty"`
}

// Forced is an order the core decides: the other choice closes Cycle.
type Forced struct {
	Order string `json:"order"`
	// Before and After name the transactions of a forced order (absent for
	// other forced facts, such as a read-from choice).
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Cycle  []Step `json:"cycle"`
}

// Step is one edge of a cycle: From precedes To by an edge of Kind (ww,
// wr, rw, process, realtime) on Key, for the reason Why.
type Step struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	Key  string `json:"key,omitempty"`
	// Via names the order ("realtime" or "process") that fixed the version
	// order behind a ww or rw step, when no choice did.
	Via string `json:"via,omitempty"`
	// SlackNS is a realtime step's slack, (s_to-Δ)-(e_from+Δ) in ns.
	SlackNS *int64 `json:"slack_ns,omitempty"`
	Why     string `json:"why"`
}

// Stats describe the work done; durations are in nanoseconds.
type Stats struct {
	Txns       int   `json:"txns"`
	Reads      int   `json:"reads"`
	Pairs      int   `json:"pairs"`
	Vars       int   `json:"vars"`
	Nodes      int   `json:"nodes"`
	Conflicts  int64 `json:"conflicts"`
	CoreChecks int   `json:"core_checks"`
	EncodeNS   int64 `json:"encode_ns"`
	SolveNS    int64 `json:"solve_ns"`
	CoreNS     int64 `json:"core_ns"`
	// TimedOut: the time budget ran out somewhere, so an unknown verdict,
	// or an invalid one whose list of anomalies may be incomplete.
	TimedOut bool `json:"timed_out"`
	// WitnessLevel is set when a valid verdict's witness was found at a
	// stricter level (strict serializability implies the weaker ones),
	// which is tried first when timestamps allow; the other figures are
	// then those of that check.
	WitnessLevel string `json:"witness_level,omitempty"`
}

// Alert is one line of `streamcheck run`'s alert stream: the anomaly in
// the schema of check's anomalies, plus what the online engine knows.
type Alert struct {
	// ID is stable across replays and restarts; an update (Updated) of an
	// alert whose core shrank once its members closed keeps it.
	ID      string `json:"id"`
	Updated bool   `json:"updated"`
	// Level is the level checked (online: strict-serializable) and
	// PromisedLevel the one the database promises; NeedsRealtime says the
	// core violates only with real-time edges, so it proves a stale read,
	// not a violation of a promise without real time.
	Level         string `json:"level"`
	PromisedLevel string `json:"promised_level"`
	NeedsRealtime bool   `json:"needs_realtime"`
	SkewNS        int64  `json:"skew_ns"`
	InDoubtNS     *int64 `json:"indoubt_ns"`
	InitialState  string `json:"initial_state"`
	// Watermark is the start-time watermark when the alert fired.
	Watermark int64 `json:"watermark"`
	// PastRetention says what of the proof is past the retention bound
	// of evicted bodies (a read whose writer may be gone, or transactions
	// set aside); empty when the core is the whole proof.
	PastRetention string `json:"past_retention,omitempty"`
	Anomaly
}

// Readable is Compact with the client times as people read them
// (history.FormatInterval: RFC 3339 and a duration for wall-clock times,
// the numbers for offsets), for the text report and the status page.
// Compact itself keeps the numbers, so that ParseCompact reads it back.
func (t Txn) Readable() string {
	if t.Start == nil || t.End == nil {
		return t.Compact
	}
	// Compact writes the id verbatim, then "[start,end]".
	raw := fmt.Sprintf("%s[%d,%d]", t.ID, *t.Start, *t.End)
	if !strings.HasPrefix(t.Compact, raw) {
		return t.Compact
	}
	return t.ID + history.FormatInterval(*t.Start, *t.End) + t.Compact[len(raw):]
}

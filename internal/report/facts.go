package report

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Facts is what a check made of the database's own facts (commit_ts,
// start_ts, PostgreSQL's xid and snapshot; docs/SEMANTICS.md §10). It is
// its own report class beside the verdict: the verdict on the level is the
// black-box one, and a history whose facts contradict its reads is
// reported here, never as an anomaly of the level.
type Facts struct {
	// ByFacts: the verdict is the facts' own witness (no search ran).
	ByFacts bool `json:"by_facts"`
	// Unused, when set, says why the facts could not settle the history
	// and the black-box path decided without them.
	Unused string `json:"unused,omitempty"`
	// Inconsistent, when set, is the class "stamps inconsistent with
	// reads": the history is valid at the level, but no completion of the
	// level keeps the database's facts.
	Inconsistent *Inconsistency `json:"inconsistent,omitempty"`
}

// Inconsistency is a subset-minimal set of transactions whose facts
// contradict their reads: the projection on Core is not valid with its
// facts, and dropping any one member makes it so.
type Inconsistency struct {
	Core []string `json:"core"`
	Txns []Txn    `json:"txns"`
	// Why says how the facts' own witness failed on the whole history.
	Why string `json:"why,omitempty"`
	// TxnFacts holds each core member's facts as recorded, in Core's
	// order ("commit_ts=7 start_ts=3", "xid=750 snapshot=748:751:749").
	TxnFacts []string `json:"txn_facts"`
}

// NewInconsistency builds the class from a core and the history.
func NewInconsistency(core []string, why string, h *history.History) *Inconsistency {
	in := &Inconsistency{Core: append([]string{}, core...), Why: why, Txns: []Txn{}, TxnFacts: []string{}}
	at := make(map[string]int, len(h.Txns))
	for i := range h.Txns {
		at[h.Txns[i].ID] = i
	}
	for _, id := range core {
		i, ok := at[id]
		if !ok {
			in.Txns = append(in.Txns, Txn{ID: id, Ops: []string{}, Compact: id})
			in.TxnFacts = append(in.TxnFacts, "")
			continue
		}
		in.Txns = append(in.Txns, txn(&h.Txns[i]))
		in.TxnFacts = append(in.TxnFacts, FactsText(h.FactsOf(i)))
	}
	return in
}

// FactsText renders one transaction's facts.
func FactsText(f history.Facts) string {
	var parts []string
	if f.Has&history.HasCommitTS != 0 {
		parts = append(parts, fmt.Sprintf("commit_ts=%d", f.CommitTS))
	}
	if f.Has&history.HasStartTS != 0 {
		parts = append(parts, fmt.Sprintf("start_ts=%d", f.StartTS))
	}
	if f.Has&history.HasXid != 0 {
		parts = append(parts, fmt.Sprintf("xid=%d", f.Xid))
	}
	if f.Has&history.HasSnapshot != 0 && f.Snap != nil {
		parts = append(parts, "snapshot="+f.Snap.String())
	}
	if len(parts) == 0 {
		return "no facts"
	}
	return strings.Join(parts, " ")
}

// writeFacts writes the facts section of the text report.
func writeFacts(bw *bufio.Writer, r *Report) {
	f := r.Facts
	if f == nil {
		return
	}
	switch {
	case f.Inconsistent != nil:
		in := f.Inconsistent
		fmt.Fprintf(bw, "\nSTAMPS INCONSISTENT WITH READS: the history is %s, but no order of the level keeps the database's own facts\n", r.Verdict)
		fmt.Fprintf(bw, "  set: %s\n", strings.Join(in.Core, ", "))
		for i, t := range in.Txns {
			line := "    " + t.Readable() + "  {" + in.TxnFacts[i] + "}"
			if t.Source != "" {
				line += "    [" + t.Source + "]"
			}
			fmt.Fprintln(bw, line)
		}
		if in.Why != "" {
			fmt.Fprintf(bw, "  why: %s\n", in.Why)
		}
	case f.ByFacts:
		fmt.Fprintln(bw, "database facts: the verdict is their witness (no search)")
	case f.Unused != "":
		fmt.Fprintf(bw, "database facts: they leave part of the history open (%s); the search decided it\n", f.Unused)
	}
}

package online

// PinReason is the rule that kept a time-closed window member from
// leaving at the last step that evicted (issue 22: which rule pins what).
// A member is counted under the first rule it failed in its last pass.
type PinReason uint8

const (
	// PinNotReached: the step ended (cancelled) before the member was
	// tried.
	PinNotReached PinReason = iota
	// PinPendingAlert: a member of a pending alert's core (R1).
	PinPendingAlert
	// PinList: it touches a list key (list keys stay pinned).
	PinList
	// PinOpenNeighbour: R3, a neighbour is not time-closed.
	PinOpenNeighbour
	// PinEarlierWriter: R4, an earlier writer of one of its keys is still
	// a member and was not tried yet in the step's last pass (a writer
	// that was tried and stayed may be overtaken).
	PinEarlierWriter
	// PinEdge, PinReadSource, PinWriterPair, PinCommit: R2, an edge at
	// it, the source of one of its reads, the order of a writer pair with
	// it, or its own commit (an unknown outcome) is not decided.
	PinEdge
	PinReadSource
	PinWriterPair
	PinCommit
	// PinVersionOrder: R4, not proven after its key's live version or
	// before another writer, or a read of the version it overwrites is
	// not decided.
	PinVersionOrder
	// PinProbeBudget: a constraint was left undecided because the step's
	// probes ran out (it may be decided at a later step).
	PinProbeBudget
	// PinBackoff: an R2 probe came back undecided at an earlier step and
	// nothing that could decide it has arrived since (evict_backoff.go).
	PinBackoff
	// PinParked is not a pin: it counts the members of the isolated
	// groups parked out of the instance (park_group.go), which are in
	// neither the window nor Pinned.
	PinParked
	numPinReasons
)

var pinReasonNames = [numPinReasons]string{
	PinNotReached:    "not-reached",
	PinPendingAlert:  "pending-alert",
	PinList:          "list-key",
	PinOpenNeighbour: "r3-open-neighbour",
	PinEarlierWriter: "r4-earlier-writer",
	PinEdge:          "r2-edge",
	PinReadSource:    "r2-read-source",
	PinWriterPair:    "r2-writer-pair",
	PinCommit:        "r2-commit",
	PinVersionOrder:  "r4-version-order",
	PinProbeBudget:   "probe-budget",
	PinBackoff:       "probe-backoff",
	PinParked:        "parked",
}

// String is the reason's name in the status line and metrics.
func (r PinReason) String() string {
	if r < numPinReasons {
		return pinReasonNames[r]
	}
	return "unknown"
}

// PinReasons lists every reason, in order.
func PinReasons() []PinReason {
	rs := make([]PinReason, numPinReasons)
	for i := range rs {
		rs[i] = PinReason(i)
	}
	return rs
}

// PinnedBy counts, per PinReason, the members pinned at the last step
// that evicted.
type PinnedBy [numPinReasons]int

// pin records why t stays, at this pass: a probe that failed for want of
// budget counts as the budget, whatever the rule.
func (s *evictStep) pin(t int32, why PinReason) {
	if why >= PinEdge && why <= PinVersionOrder && s.pr.budget <= 0 {
		why = PinProbeBudget
	}
	s.why[t] = why
}

// countPinned counts the time-closed members still in the window with
// their bodies after the step, by the reason each stays.
//
// The isolated groups that may leave the instance are parked first
// (parkIsolated): the count is of the members that stay, and by[PinParked]
// of the parked ones.
func (s *evictStep) countPinned() {
	s.parkIsolated() // park_group.go
	r := s.r
	var by PinnedBy
	for t := range r.h.Txns {
		i := r.pos[t]
		if i < 0 || s.removed[t] || r.ghost[t] || !s.o.closed.get(i) || !s.st.Member.get(i) {
			continue
		}
		why := s.why[t]
		if s.pinned[i] {
			why = PinPendingAlert
		}
		by[why]++
	}
	by[PinParked] = s.st.parkedCount()
	s.st.pinnedBy = by
}

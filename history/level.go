package history

import (
	"fmt"
	"math"
	"strings"
)

// Level is an isolation level, named as Jepsen/Elle name it.
type Level uint8

const (
	Serializable Level = iota
	StrongSessionSerializable
	StrictSerializable
	SnapshotIsolation
	StrongSessionSnapshotIsolation
	StrongSnapshotIsolation
)

var levelNames = [...]string{
	Serializable:                   "serializable",
	StrongSessionSerializable:      "strong-session-serializable",
	StrictSerializable:             "strict-serializable",
	SnapshotIsolation:              "snapshot-isolation",
	StrongSessionSnapshotIsolation: "strong-session-snapshot-isolation",
	StrongSnapshotIsolation:        "strong-snapshot-isolation",
}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel accepts a Jepsen level name.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("unknown level %q (want one of %s)", s, strings.Join(levelNames[:], ", "))
}

// RealTime reports whether the level orders transactions by (widened)
// client time. Only such levels may use time-based shortcuts
// (EXACTNESS.md §1).
func (l Level) RealTime() bool {
	return l == StrictSerializable || l == StrongSnapshotIsolation
}

// SessionOrder reports whether the level orders a session's transactions.
// Strict levels include it (EXACTNESS.md §1, history I).
func (l Level) SessionOrder() bool {
	return l != Serializable && l != SnapshotIsolation
}

// InitialState says what a key holds before its first write.
type InitialState uint8

const (
	// InitialEmpty: absent (registers) or the empty list.
	InitialEmpty InitialState = iota
	// InitialUnknown: one unknown value per key, absent included, the same
	// for every read that sees it (EXACTNESS.md §5 "Starting on a live
	// database").
	InitialUnknown
)

func (s InitialState) String() string {
	if s == InitialUnknown {
		return "unknown"
	}
	return "empty"
}

// ParseInitialState accepts "empty" or "unknown".
func ParseInitialState(s string) (InitialState, error) {
	switch s {
	case "empty":
		return InitialEmpty, nil
	case "unknown":
		return InitialUnknown, nil
	}
	return 0, fmt.Errorf("unknown initial state %q (want empty or unknown)", s)
}

// NoInDoubt means an unknown transaction's effects may become visible at
// any time: its end is +∞ (Elle's rule, EXACTNESS.md §2).
const NoInDoubt int64 = -1

// Options fix the meaning of a history beyond its text. The same options
// must be given to the offline and the online checker for their verdicts to
// be comparable.
type Options struct {
	Level Level
	// Skew is the clock-skew bound Δ in the timestamps' unit: i precedes j
	// in real time iff End_i+Skew <= Start_j-Skew.
	Skew int64
	// InDoubt is the in-doubt horizon D for unknown transactions: their end
	// is End+D. NoInDoubt (the default for check) makes it +∞.
	InDoubt      int64
	InitialState InitialState

	_ struct{}
}

// DefaultOptions are check's defaults.
func DefaultOptions() Options {
	return Options{Level: Serializable, InDoubt: NoInDoubt}
}

// EffectiveEnd is the end used for real-time order: End for committed and
// aborted transactions, End+InDoubt or +∞ for unknown ones.
func (o *Options) EffectiveEnd(t *Txn) int64 {
	if t.Status != Unknown {
		return t.End
	}
	if o.InDoubt < 0 {
		return math.MaxInt64
	}
	if t.End > math.MaxInt64-o.InDoubt {
		return math.MaxInt64
	}
	return t.End + o.InDoubt
}

// Precedes reports whether a precedes b in real time under o (both must
// have timestamps): effEnd(a)+Δ <= start(b)-Δ, and a != b. The one case in
// which that holds both ways, two zero-length transactions at the same
// instant with Δ = 0, counts as concurrent: "finished before began" cannot
// order two points that coincide. Every checker and oracle uses this
// function, so they agree on that corner.
func (o *Options) Precedes(a, b *Txn) bool {
	if a == b {
		return false
	}
	return o.precedes(a, b) && !o.precedes(b, a)
}

func (o *Options) precedes(a, b *Txn) bool {
	ea := o.EffectiveEnd(a)
	if ea == math.MaxInt64 {
		return false
	}
	return ea <= b.Start-2*o.Skew
}

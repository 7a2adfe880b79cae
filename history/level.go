package history

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Level is an isolation level, named as Jepsen/Elle name it. Only the
// levels in the registry exist: ParseLevel accepts nothing else, so no
// command lists or parses a level that a checker then rejects.
//
// # One file per level
//
// Each level is defined once, in its own file (level_<name>.go): its
// constant, and a LevelInfo saying what it means, which definition it
// follows, what it orders, which anomalies it forbids and which back end
// checks it. The checkers ask the level (RealTime, SessionOrder, Def)
// rather than compare it with a constant, so adding a level is its file,
// its line in levels below, its node in the lattice (lattice.go) and its
// tests. The files live in package history, not in a package of their own,
// because Options carries the level and every checker, decoder and oracle
// already imports history: a separate package would either import history
// (a cycle once Options names it) or make history import it for one type.
type Level uint8

// Orders are the orders a level adds to the read-from and version orders
// of every level (docs/SEMANTICS.md §1): the edges a checker of the level draws.
type Orders uint8

const (
	// OrderSession orders each session's transactions (the "process"
	// edges; Elle's "-process" anomalies).
	OrderSession Orders = 1 << iota
	// OrderRealTime orders a transaction that ended (client clock widened
	// by the skew) before another began (Elle's "-realtime" anomalies).
	OrderRealTime
	// OrderBeginCommit splits a transaction into begin and commit nodes
	// (the snapshot-isolation family: a transaction reads at its begin
	// and writes at its commit; Viper's BC-polygraphs).
	OrderBeginCommit
)

// Backend is the engine that decides a level.
type Backend uint8

const (
	// BackendSAT is incremental's encoding and the CDCL solver: it decides
	// levels whose version order is not known (NP-complete, Papadimitriou
	// 1979; Biswas & Enea 2019).
	BackendSAT Backend = iota
	// BackendPolynomial is a graph checker for levels with a polynomial
	// check (read committed, read atomic, causal: Biswas & Enea 2019); no
	// checked level uses it yet.
	BackendPolynomial
)

func (b Backend) String() string {
	if b == BackendPolynomial {
		return "polynomial"
	}
	return "sat"
}

// LevelInfo is the definition of one level streamcheck checks.
type LevelInfo struct {
	Level Level
	// Name is the Jepsen/Elle name, the one --level takes and verdicts
	// print.
	Name string
	// Aliases are other names --level accepts for the level (Elle's other
	// spellings; verdicts always print Name).
	Aliases []string
	// Meaning is one line for help texts and the README's table.
	Meaning string
	// Definition is the definition the checkers follow, with Reference
	// naming its source (paper and section).
	Definition string
	Reference  string
	// Orders are the orders the level adds (session, real time, ...).
	Orders Orders
	// Forbids lists the anomaly classes the level forbids (anomaly.go
	// names; a class with a suffix is forbidden only with that order).
	Forbids []string
	// Backend decides the level.
	Backend Backend
	// Online reports whether `run` (and so the canary and the demo)
	// checks the level. A level checked only offline is refused there
	// rather than checked as another level: run's engine checks the
	// strongest real-time level, and an alert at it that the promised
	// level allows (a write skew under snapshot isolation) would be a
	// false alarm.
	Online bool

	_ struct{}
}

// levels is the registry of the levels that work: every command's
// --level (its parsing, its help and its error message), the README's
// table (a test holds it equal), the offline and online checkers and the
// oracle read it. A level is added here when `check` and the oracle check
// it (`run` too when its Online is set); the lattice (lattice.go) names
// the levels to come. The order is the listing order, weakest first along
// the lattice; a level's constant is its own (byLevel indexes by it), so
// levels added by different files never renumber each other.
//
// Constants taken: 0-2 the serializable family; 3-6 the
// snapshot-isolation family; 7-11 the weaker levels.
var levels = []*LevelInfo{
	&readCommitted,
	&readAtomic,
	&causal,
	&pl2Plus,
	&snapshotIsolation,
	&strongSessionSnapshotIsolation,
	&generalizedSnapshotIsolation,
	&strongSnapshotIsolation,
	&repeatableRead,
	&serializable,
	&strongSessionSerializable,
	&strictSerializable,
}

// maxLevels bounds the Level constants (byLevel's size).
const maxLevels = 32

// byLevel indexes the registry by Level; nil for a number no level has.
var byLevel = func() (a [maxLevels]*LevelInfo) {
	for _, l := range levels {
		if a[l.Level] != nil {
			panic(fmt.Sprintf("history: levels %s and %s share the constant %d", a[l.Level].Name, l.Name, l.Level))
		}
		a[l.Level] = l
	}
	return a
}()

// Levels returns the registry of supported levels, weakest first.
func Levels() []LevelInfo {
	out := make([]LevelInfo, len(levels))
	for i, l := range levels {
		out[i] = *l
	}
	return out
}

// LevelNames returns the supported levels' names, weakest first, as help
// texts and error messages list them.
func LevelNames() []string {
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = l.Name
	}
	return names
}

// OnlineLevelNames returns the names of the levels `run` checks, weakest
// first.
func OnlineLevelNames() []string {
	var names []string
	for _, l := range levels {
		if l.Online {
			names = append(names, l.Name)
		}
	}
	return names
}

// LevelTable formats the registry for a help text: head, then one line
// per level, indented by indent, with its name padded and its meaning.
func LevelTable(head, indent string) string {
	width := 0
	for _, l := range levels {
		width = max(width, len(l.Name))
	}
	var b strings.Builder
	b.WriteString(head)
	for _, l := range levels {
		fmt.Fprintf(&b, "%s%-*s  %s\n", indent, width, l.Name, l.Meaning)
	}
	return b.String()
}

// Supported reports whether l is in the registry (a Level built from a
// number may not be).
func (l Level) Supported() bool { return int(l) < maxLevels && byLevel[l] != nil }

// Def returns the level's definition; it panics for a level outside the
// registry, which ParseLevel never returns.
func (l Level) Def() *LevelInfo {
	if !l.Supported() {
		panic(fmt.Sprintf("history: %v is not a supported level", l))
	}
	return byLevel[l]
}

func (l Level) String() string {
	if l.Supported() {
		return byLevel[l].Name
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel accepts a supported level's name or alias; the error for
// anything else lists the supported names.
func ParseLevel(s string) (Level, error) {
	for _, l := range levels {
		if l.Name == s || slices.Contains(l.Aliases, s) {
			return l.Level, nil
		}
	}
	return 0, fmt.Errorf("unknown level %q (streamcheck checks %s)", s, strings.Join(LevelNames(), ", "))
}

// RealTime reports whether the level orders transactions by (widened)
// client time. Only such levels may use time-based shortcuts
// (docs/SEMANTICS.md §1).
func (l Level) RealTime() bool {
	return int(l) < len(levelOrders) && levelOrders[l]&OrderRealTime != 0
}

// SessionOrder reports whether the level orders a session's transactions.
// Strict levels include it (docs/SEMANTICS.md §1, history I).
func (l Level) SessionOrder() bool {
	return int(l) < len(levelOrders) && levelOrders[l]&OrderSession != 0
}

// levelOrders holds each level's Orders in a flat array: the checkers ask
// RealTime and SessionOrder for every pair they order. A load from it
// costs about 0.2 ns more per question than the enum comparison it
// replaces, half the extra of going through the *LevelInfo
// (BenchmarkLevelQuestions; BENCHMARKS.md, section seam).
var levelOrders = func() (o [maxLevels]Orders) {
	for _, l := range levels {
		o[l.Level] = l.Orders
	}
	return o
}()

// InitialState says what a key holds before its first write.
type InitialState uint8

const (
	// InitialEmpty: absent (registers) or the empty list.
	InitialEmpty InitialState = iota
	// InitialUnknown: one unknown value per key, absent included, the same
	// for every read that sees it (docs/SEMANTICS.md §5 "Starting on a live
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
// any time: its end is +∞ (Elle's rule, docs/SEMANTICS.md §2).
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

package incremental

// What the online engine (package online) uses of the encoding: the
// prepared history, the encoder and its literals, core finding and
// description. Exported here, as aliases and small wrappers, rather than
// by renaming in place, so that the offline files keep their names; the
// field and method accessors are in export_access.go.

// Prepared is a history interned and indexed for encoding (prep.go).
type Prepared = prepared

// Encoder is one instance of the solver built from a Prepared (encode.go).
type Encoder = encoder

// PairVar is the version-order variable of two writers (encode.go).
type PairVar = pairVar

// Lit is an encoder literal; LitTrue and LitFalse are its constants.
type Lit = lit

// EncodeConfig tells an Encoder what besides the history it encodes.
type EncodeConfig = encodeConfig

// CoreFinder shrinks a violating set to a subset-minimal core (check.go).
type CoreFinder = coreFinder

// LitTrue and LitFalse are the constant literals.
const LitTrue, LitFalse = litTrue, litFalse

// Prepare interns and indexes h for encoding.
var Prepare = prepare

// PrepareReusing is Prepare taking over the tables of old, which the
// caller no longer uses (Prepared.Drop).
var PrepareReusing = prepareReusing

// NewEncoder builds the encoder of p.
var NewEncoder = newEncoder

// NewCoreFinder starts a core finder on p.
var NewCoreFinder = newCoreFinder

// Describe explains a core of p: its cycle, class and forced steps.
var Describe = describe

// AlertID names an anomaly by its members' content, class and stream
// (alertid.go, A1-A3).
var AlertID = alertID

// ContentCompare is the content order of transactions that core
// shrinking and alert ids share (alertid.go, A3).
var ContentCompare = contentCompare

// Reuse returns n zero elements, in s's array when it holds n.
func Reuse[T any](s []T, n int) []T { return reuse(s, n) }

// ReuseEmpty returns an empty slice of capacity n or more, s's array when
// it holds n.
func ReuseEmpty[T any](s []T, n int) []T { return reuseEmpty(s, n) }

// WindowEncodeConfig is the encoding of an online window's instance:
// reads not yet released may still read its values, kept are orders
// (positions) that hold in every completion that commits their first
// end (an edge on that commit when it is an unknown that decided does
// not fix true: encode.go keptGuard), and decided are commit
// decisions of unknown transactions (positions).
func WindowEncodeConfig(kept [][2]int32, decided map[int32]bool) EncodeConfig {
	return encodeConfig{readsToCome: true, kept: kept, decided: decided}
}

// WithRecycled returns cfg with old's arrays, and its solver's, handed to
// the encoder built from it (nil: none). old must not be used again:
// building the new encoder zeroes it. The encoding and every answer are
// those of a fresh encoder (solver/recycle.go, R1; recycleFrom).
func WithRecycled(cfg EncodeConfig, old *Encoder) EncodeConfig {
	cfg.recycled = old
	return cfg
}

// Explaining returns cfg with the explanation run even past the deadline:
// an alert is always explained.
func Explaining(cfg Config) Config {
	cfg.explainPastDeadline = true
	return cfg
}

// ListKeys says, per interned key, whether it is a list key.
func (p *prepared) ListKeys() []bool { return p.isList }

// Drop lets go of the history and the value index's view of it, keeping
// only the tables a later PrepareReusing takes over.
func (p *prepared) Drop() {
	p.h = nil
	p.valueWriters.at = nil
}

package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Report is the outcome of one check, in the shape every output shares:
// `streamcheck check --format json` writes it as one JSON object, and the
// online engine and the alert sinks are meant to send the same object.
//
// Fields only grow; a consumer must ignore fields it does not know (R1 in
// doc.go).
type Report struct {
	// Valid is true when the history satisfies the level, false when an
	// anomaly was proven, and null when the check ran out of time first.
	Valid *bool `json:"valid"`
	// Verdict spells Valid out: "valid", "invalid" or "unknown".
	Verdict string `json:"verdict"`
	// Level, SkewNS, InDoubtNS and InitialState are the options actually
	// checked (history.Options): a verdict means nothing without them.
	Level  string `json:"level"`
	SkewNS int64  `json:"skew_ns"`
	// InDoubtNS is the in-doubt horizon for transactions of unknown
	// outcome; null means +∞ (history.NoInDoubt).
	InDoubtNS    *int64 `json:"indoubt_ns"`
	InitialState string `json:"initial_state"`
	// Txns is the number of transactions checked.
	Txns int `json:"txns"`
	// MaxAnomalies is the limit the search was given (0: unknown); when
	// len(Anomalies) reaches it there may be more.
	MaxAnomalies int `json:"max_anomalies,omitempty"`
	// Anomalies is empty (never null) unless the verdict is invalid. An
	// invalid verdict may come with no anomaly when the time budget ran out
	// between the proof and the extraction of a core.
	Anomalies []Anomaly `json:"anomalies"`
	Stats     Stats     `json:"stats"`
}

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

// New builds the report of res, a result of checking h. h supplies the
// core transactions' operations; a core id missing from h (which a correct
// checker never produces) gets a Txn with only its id.
func New(res *incremental.Result, h *history.History) *Report {
	o := res.Options
	r := &Report{
		Verdict:      res.Verdict.String(),
		Level:        o.Level.String(),
		SkewNS:       o.Skew,
		InitialState: o.InitialState.String(),
		Txns:         res.Stats.Txns,
		Anomalies:    []Anomaly{},
		Stats: Stats{
			Txns:       res.Stats.Txns,
			Reads:      res.Stats.Reads,
			Pairs:      res.Stats.Pairs,
			Vars:       res.Stats.Vars,
			Nodes:      res.Stats.Nodes,
			Conflicts:  res.Stats.Conflicts,
			CoreChecks: res.Stats.CoreChecks,
			EncodeNS:   int64(res.Stats.EncodeTime),
			SolveNS:    int64(res.Stats.SolveTime),
			CoreNS:     int64(res.Stats.CoreTime),
			TimedOut:   res.Stats.TimedOutAny,
		},
	}
	if res.Stats.ByStricter {
		r.Stats.WitnessLevel = history.StrictSerializable.String()
	}
	switch res.Verdict {
	case incremental.Valid:
		r.Valid = ptr(true)
	case incremental.Invalid:
		r.Valid = ptr(false)
	}
	if o.InDoubt >= 0 {
		r.InDoubtNS = ptr(o.InDoubt)
	}
	var byID map[string]*history.Txn
	if len(res.Anomalies) > 0 && h != nil {
		byID = make(map[string]*history.Txn, len(h.Txns))
		for i := range h.Txns {
			byID[h.Txns[i].ID] = &h.Txns[i]
		}
	}
	for _, a := range res.Anomalies {
		r.Anomalies = append(r.Anomalies, NewAnomaly(a, byID))
	}
	return r
}

// NewAnomaly converts one anomaly; byID supplies the core transactions as
// recorded (nil: ids only).
func NewAnomaly(a incremental.Anomaly, byID map[string]*history.Txn) Anomaly {
	ra := Anomaly{
		Type:        a.Type,
		Class:       a.Class,
		Core:        append([]string{}, a.Core...),
		Txns:        []Txn{},
		Forced:      []Forced{},
		Cycle:       steps(a.Cycle),
		Explanation: append([]string{}, a.Text...),
	}
	for _, id := range a.Core {
		if t := byID[id]; t != nil {
			ra.Txns = append(ra.Txns, txn(t))
		} else {
			ra.Txns = append(ra.Txns, Txn{ID: id, Ops: []string{}, Compact: id})
		}
	}
	for _, f := range a.Forced {
		ra.Forced = append(ra.Forced, Forced{Order: f.Order, Before: f.Before, After: f.After, Cycle: steps(f.Cycle)})
	}
	return ra
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

// NewAlert converts an online alert.
func NewAlert(a *incremental.Alert, opts history.Options, byID map[string]*history.Txn) Alert {
	out := Alert{
		ID:            a.ID,
		Updated:       a.Updated,
		Level:         a.Level.String(),
		PromisedLevel: a.Promised.String(),
		NeedsRealtime: a.NeedsRealtime,
		SkewNS:        a.Skew,
		InitialState:  opts.InitialState.String(),
		Watermark:     a.Watermark,
		PastRetention: a.PastRetention,
		Anomaly:       NewAnomaly(a.Anomaly, byID),
	}
	if opts.InDoubt >= 0 {
		out.InDoubtNS = ptr(opts.InDoubt)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func steps(in []incremental.Step) []Step {
	out := make([]Step, 0, len(in))
	for _, s := range in {
		out = append(out, Step{From: s.From, To: s.To, Kind: s.Kind, Key: s.Key, Via: s.Via, SlackNS: s.SlackNS, Why: s.Why})
	}
	return out
}

func txn(t *history.Txn) Txn {
	out := Txn{
		ID:      t.ID,
		Status:  t.Status.String(),
		Ops:     make([]string, 0, len(t.Ops)),
		Compact: t.Compact(),
	}
	if t.HasSession {
		out.Session = t.Session
	}
	if t.HasTime {
		out.Start, out.End = ptr(t.Start), ptr(t.End)
	}
	if t.Pos.Source != "" || t.Pos.Line > 0 {
		out.Source = t.Pos.String()
	}
	for _, op := range t.Ops {
		// One-op transaction without id or annotations: Compact renders
		// exactly the op, so both fields share one notation.
		one := history.Txn{Ops: []history.Op{op}}
		out.Ops = append(out.Ops, strings.TrimSpace(one.Compact()))
	}
	return out
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

// WriteJSON writes r as one indented JSON object and a newline.
func WriteJSON(w io.Writer, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Duration formats a nanosecond count as the text and DOT outputs show
// skews and horizons: a Go duration ("0s", "1.5ms").
func Duration(ns int64) string { return time.Duration(ns).String() }

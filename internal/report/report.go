package report

import (
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/verdict"
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
	// Facts is set when the history carried the database's own facts
	// (facts.go).
	Facts *Facts `json:"facts,omitempty"`
	// ValidAt, on an invalid verdict at a serializable level, names the
	// level of the snapshot-isolation family at which the same history is
	// valid (serializable: snapshot-isolation): its anomalies are allowed
	// under snapshot isolation, which is what most databases promise.
	ValidAt string `json:"valid_at,omitempty"`
}

// The anomaly and alert types live in package verdict, below both the
// checkers and the alert sinks, so that a sink outside the module or a
// checker other than the SAT engine can name them; these aliases keep
// report's callers and its JSON schema (R1) unchanged.
type (
	Anomaly = verdict.Anomaly
	Txn     = verdict.Txn
	Forced  = verdict.Forced
	Step    = verdict.Step
	Stats   = verdict.Stats
	Alert   = verdict.Alert
)

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
		r.Stats.WitnessLevel = res.Stats.StricterLevel.String()
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

// NewAlert converts an online alert.
func NewAlert(a *online.Alert, opts history.Options, byID map[string]*history.Txn) Alert {
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

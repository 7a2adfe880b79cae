package checkcmd

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// factsCheck is check's path for a history that carries the database's
// own facts (docs/SEMANTICS.md §10): stampcheck tries the facts' witness
// and falls back to the black-box checker (r.checkFn), so that the
// verdict is the black-box one and "stamps inconsistent with reads" is
// reported in its own class.
type factsCheck struct {
	rep *stampcheck.Report
}

// useFacts swaps r.checkFn for the facts' path when h has facts and
// returns the holder of its report (nil otherwise): stampcheck.CheckWith
// at the serializable levels, stampcheck.CheckSnapshotLevel with the
// level's rules (stampcheck.RulesFor: strong session SI's session order,
// strong SI's C_i before B_j, GSI's C_i before C_j) at the snapshot
// levels. The level's own checker stays the black box in both.
func (r *runner) useFacts(h *history.History) *factsCheck {
	lv := r.c.opts.Level
	if !h.HasFacts() || !serialFamily(lv) && !lv.BeginCommit() {
		return nil
	}
	fc := &factsCheck{}
	black := r.checkFn
	r.checkFn = func(ctx context.Context, h *history.History, opts history.Options, cfg incremental.Config) (*incremental.Result, error) {
		bb := stampcheck.BlackBox(func(ctx context.Context, h *history.History, opts history.Options) (*incremental.Result, error) {
			return black(ctx, h, opts, cfg)
		})
		var rep *stampcheck.Report
		var err error
		if opts.Level.BeginCommit() {
			rep, err = stampcheck.CheckSnapshotLevel(ctx, h, opts, stampcheck.RulesFor(opts.Level), bb)
		} else {
			rep, err = stampcheck.CheckWith(ctx, h, opts, cfg, bb)
		}
		if err != nil {
			return nil, err
		}
		fc.rep = rep
		return rep.Result, nil
	}
	return fc
}

// apply adds the facts' section to the report and makes an inconsistency
// exit 1: the level holds, but the database's own claims are proven
// false, which a pipeline that asked for them must not read as success
// (docs/SEMANTICS.md §7, §10).
func (fc *factsCheck) apply(rep *report.Report, h *history.History, o cliutil.Outcome) cliutil.Outcome {
	if fc == nil || fc.rep == nil {
		return o
	}
	rep.Facts = &report.Facts{ByFacts: fc.rep.ByFacts, Unused: fc.rep.Unused}
	if fc.rep.Inconsistent != nil {
		rep.Facts.Inconsistent = report.NewInconsistency(fc.rep.Inconsistent, fc.rep.Why, h)
		o.Anomalies = max(o.Anomalies, 1)
	}
	return o
}

// serialFamily reports whether the facts' serial witness applies to lv:
// the serializable levels (docs/SEMANTICS.md §10). The snapshot family
// (history.Level.BeginCommit) has its own path; the weak levels are
// checked black-box, their facts unused, until their own facts rules are
// written.
func serialFamily(lv history.Level) bool {
	switch lv {
	case history.Serializable, history.StrongSessionSerializable, history.StrictSerializable:
		return true
	}
	return false
}

// compactEvery is how many transactions the compact path reads between
// looks at its context.
const compactEvery = 1 << 16

// compact is check's path for a plain native file at a serializable
// level or one of the snapshot family (docs/SEMANTICS.md §10 "The compact
// path of check", §3 "T2: the compact path of check at the serializable
// levels"): the file is decoded line by line into a compact form, never
// into a history.History, and one witness is tried there. Two forms are
// fed side by side until one refuses, which for a plain file happens at
// its first committed transaction: stampcheck.Compact when the
// transactions carry the database's stamps (the stamps' witness of the
// level, useFacts' split), incremental.TimeCompact when they carry no
// facts but client times, at the serializable levels (Check's witness
// from client time). It returns the Valid result, and the facts' report
// on the stamps' path, when a witness holds; nil otherwise, and run then
// reads and checks the file as ever (a compact form never reports: an
// input error, an open question or an anomaly is the full path's to
// decide and name). Standard input, bundled examples and compressed
// files take the full path (they cannot be read twice); an interrupt
// during the scan does too, where the check honours it.
func (r *runner) compact(ctx context.Context) (*incremental.Result, *factsCheck) {
	c := r.c
	lv := c.opts.Level
	if c.file == "-" || strings.HasPrefix(c.file, ExamplePrefix) || !serialFamily(lv) && !lv.BeginCommit() {
		return nil, nil
	}
	f, err := os.Open(c.file)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	r.progressf("reading %s (compact path)", c.file)
	// About 300 bytes a line in generated histories with stamps, 180 in
	// recorded ones without: a hint for the tables, not a bound.
	hint := int(min(fi.Size()/256, 1<<26))
	if res, fc, ok := r.compactSplit(ctx, f, fi.Size(), hint); ok {
		return res, fc
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil
	}
	cp := stampcheck.NewCompact(hint)
	if lv.BeginCommit() {
		cp.Require(history.HasCommitTS | history.HasStartTS)
	} else {
		cp.Require(history.HasCommitTS)
	}
	var tc *incremental.TimeCompact
	if serialFamily(lv) {
		tc = incremental.NewTimeCompact(hint)
	}
	stamps, times := true, tc != nil // the forms still feeding
	// With STREAMCHECK_COMPACT_AHEAD=1 the stamps' form is recorded on a
	// goroutine of its own while the scan decodes (stampcheck.Ahead): the
	// same form, on two processors. Off by default: measured at load
	// 13-18 on 2 cores it cost 3-13% more CPU and its wall gain could not
	// be told from the noise (BENCHMARKS.md "decode29 (issue 29)"); it is
	// for a measurement with a free second core.
	var ah *stampcheck.Ahead
	if os.Getenv("STREAMCHECK_COMPACT_AHEAD") == "1" {
		ah = cp.Ahead()
	}
	n := 0
	err = ingest.ScanNative(f, c.file, func(e *ingest.Event) error {
		if n++; n%compactEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if stamps && ah != nil {
			ah.Add(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
			stamps = !ah.Refused()
		} else if stamps {
			cp.AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
			stamps = cp.Why() == ""
		}
		if times {
			tc.AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs)
			times = tc.Why() == ""
		}
		if !stamps && !times {
			return errCompactStop
		}
		return nil
	})
	if ah != nil {
		ah.Close()
	}
	// What Refused had not told yet. A refusal is final, so a scan
	// stopped for errCompactStop stays one where both forms refused.
	stamps = cp.Why() == ""
	if err != nil {
		why := err.Error()
		if err == errCompactStop {
			why = cp.Why()
			if tc != nil {
				why += "; " + tc.Why()
			}
		}
		r.progressf("compact path not taken: %s; reading the whole history", why)
		return nil, nil
	}
	if stamps {
		var res *incremental.Result
		var why string
		if lv.BeginCommit() {
			res, why = cp.CheckSnapshot(c.opts, stampcheck.RulesFor(lv))
		} else {
			res, why = cp.CheckSerial(c.opts)
		}
		if res != nil {
			r.progressf("read and checked %s by the stamps' witness in %s", report.Plural(cp.Len(), "transaction"), since(r.start))
			return res, &factsCheck{rep: &stampcheck.Report{Result: res, ByFacts: true}}
		}
		r.progressf("compact path: %s", why)
	}
	if times {
		res, why := tc.Check(ctx, c.opts, incremental.Config{MaxAnomalies: c.maxAnomalies})
		if res != nil {
			r.progressf("read and checked %s by the witness from client time in %s", report.Plural(tc.Len(), "transaction"), since(r.start))
			return res, nil
		}
		r.progressf("compact path: %s", why)
	}
	r.progressf("reading the whole history")
	return nil, nil
}

// compactSplit is the stamps' compact form read in two parts at once
// (ingest.ScanNativeSplit, each part into its own stampcheck.Compact,
// joined by Compact.Join into the one-pass form; docs/SEMANTICS.md §10
// "The split scan"): on two cores the scan's wall time about halves.
// ok is false, and compact reads the file again in one pass, on
// anything that pass decides otherwise: a line that fails, a refusal of
// the stamps' form in any part or at the join, a history without facts
// (the witness from client time is the one pass's). When the joined form
// has facts, the one pass's TimeCompact refuses at their first line, so
// the stamps' answer here is the one pass's answer. Off with
// STREAMCHECK_SPLIT=0 or a single processor.
func (r *runner) compactSplit(ctx context.Context, f *os.File, size int64, hint int) (*incremental.Result, *factsCheck, bool) {
	c := r.c
	lv := c.opts.Level
	if os.Getenv("STREAMCHECK_SPLIT") == "0" || runtime.GOMAXPROCS(0) < 2 {
		return nil, nil, false
	}
	first := stampcheck.NewCompact(hint)
	if lv.BeginCommit() {
		first.Require(history.HasCommitTS | history.HasStartTS)
	} else {
		first.Require(history.HasCommitTS)
	}
	forms := []*stampcheck.Compact{first, first.Part(hint / 2)}
	var seen [2]int
	s, err := ingest.ScanNativeSplit(f, size, c.file, len(forms), func(k int, e *ingest.Event) error {
		if seen[k]++; seen[k]%compactEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		forms[k].AddIDs(e.Txn, e.Facts, e.KeyIDs, e.ValIDs, e.ListIDs)
		if forms[k].Why() != "" {
			return errCompactStop
		}
		return nil
	})
	if err != nil {
		return nil, nil, false
	}
	for k := 1; k < s.Parts(); k++ {
		first.Join(forms[k], s.Remap(k))
	}
	if first.Why() != "" || !first.HasFacts() {
		return nil, nil, false
	}
	var res *incremental.Result
	var why string
	if lv.BeginCommit() {
		res, why = first.CheckSnapshot(c.opts, stampcheck.RulesFor(lv))
	} else {
		res, why = first.CheckSerial(c.opts)
	}
	if res != nil {
		r.progressf("read (in %d parts) and checked %s by the stamps' witness in %s", s.Parts(), report.Plural(first.Len(), "transaction"), since(r.start))
		return res, &factsCheck{rep: &stampcheck.Report{Result: res, ByFacts: true}}, true
	}
	r.progressf("compact path: %s", why)
	r.progressf("reading the whole history")
	return nil, nil, true
}

var errCompactStop = errors.New("the compact form cannot vouch for this history")

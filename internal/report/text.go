package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// TextOptions tune WriteText. The zero value is fine.
type TextOptions struct {
	// ValidHint is appended to the verdict line of a valid report after
	// "; " (the CLI says where the witness order is).
	ValidHint string

	_ struct{}
}

// Conditions renders the options a verdict holds under, as every verdict
// line states them (T1 in doc.go):
// "level serializable, skew 0s, in-doubt ∞, initial state empty".
func (r *Report) Conditions() string {
	indoubt := "∞"
	if r.InDoubtNS != nil {
		indoubt = Duration(*r.InDoubtNS)
	}
	return fmt.Sprintf("level %s, skew %s, in-doubt %s, initial state %s", r.Level, Duration(r.SkewNS), indoubt, r.InitialState)
}

// Headline is the verdict line without a trailing newline.
func (r *Report) Headline(opts TextOptions) string {
	switch r.Verdict {
	case "valid":
		s := fmt.Sprintf("VALID: %s (%s) — %s", r.Level, r.Conditions(), Plural(r.Txns, "transaction"))
		if opts.ValidHint != "" {
			s += "; " + opts.ValidHint
		}
		return s
	case "invalid":
		n := len(r.Anomalies)
		var what string
		switch {
		case n == 0:
			what = "violation proven; the time budget ran out before a core was extracted"
		case r.MaxAnomalies > 0 && n >= r.MaxAnomalies:
			what = fmt.Sprintf("%s (the limit; there may be more)", Plural(n, "anomaly"))
		case r.Stats.TimedOut:
			what = fmt.Sprintf("%s (the time budget ran out; there may be more)", Plural(n, "anomaly"))
		default:
			what = Plural(n, "anomaly")
		}
		s := fmt.Sprintf("INVALID: not %s (%s): %s in %s", r.Level, r.Conditions(), what, Plural(r.Txns, "transaction"))
		if r.ValidAt != "" {
			s += fmt.Sprintf("; valid at %s: snapshot isolation allows what it shows", r.ValidAt)
		}
		return s
	}
	return fmt.Sprintf("UNKNOWN: %s not decided within the time budget (%s) — %s, no anomaly found", r.Level, r.Conditions(), Plural(r.Txns, "transaction"))
}

// WriteText writes the human report: the verdict line, then for each
// anomaly its type (and class when different), its core transactions as
// recorded, and the explanation, one sentence per line.
func WriteText(w io.Writer, r *Report, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, r.Headline(opts))
	for i, a := range r.Anomalies {
		name := a.Type
		if a.Class != "" && a.Class != a.Type {
			name += " (" + a.Class + ")"
		}
		fmt.Fprintf(bw, "\nanomaly %d: %s\n", i+1, name)
		fmt.Fprintf(bw, "  core: %s\n", strings.Join(a.Core, ", "))
		for _, t := range a.Txns {
			line := "    " + t.Readable()
			if t.Source != "" {
				line += "    [" + t.Source + "]"
			}
			fmt.Fprintln(bw, line)
		}
		if len(a.Explanation) > 0 {
			fmt.Fprintln(bw, "  why:")
			for _, s := range a.Explanation {
				fmt.Fprintf(bw, "    %s\n", s)
			}
		}
	}
	writeFacts(bw, r)
	return bw.Flush()
}

// Plural spells a count with its noun: "1 anomaly", "2 anomalies".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

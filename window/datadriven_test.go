package window

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamcheck/streamcheck/history"
)

// TestDataDriven runs the scripts in testdata/. Commands:
//
//	new partitions=P lateness=L [skew=Δ] [indoubt=D|none] [idle=T]
//	add p=N           one transaction per line, in docs/SEMANTICS.md's compact
//	                  notation; prints buffered or the dead letter, then W
//	release           Release: "seq: transaction"
//	closed            PopClosed: "seq ID effEnd"
//	timeclosed        one ID per line: closed or open
//	idle p=N          MarkIdle, then W
//	close             Close, then W
//	stats             Stats
//
// Every command also runs against the naive model of model_test.go, which
// must agree on everything observable; the expected text is the readable
// specification. Regenerate with -rewrite.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var s script
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out := s.run(t, d)
			if s.w != nil {
				s.m.check(t, s.w)
			}
			return out
		})
	})
}

type script struct {
	w    *Window
	m    *model
	txns map[string]history.Txn
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	for _, a := range d.CmdArgs {
		if a.Key != key {
			continue
		}
		if len(a.Vals) != 1 {
			d.Fatalf(t, "%s: want one value", key)
		}
		if a.Vals[0] == "none" {
			return history.NoInDoubt
		}
		v, err := strconv.ParseInt(a.Vals[0], 10, 64)
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		return v
	}
	return def
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && s.w == nil {
		d.Fatalf(t, "no window: start with new")
	}
	var b strings.Builder
	switch d.Cmd {
	case "new":
		cfg := Config{
			Partitions:  int(argInt(t, d, "partitions", 1)),
			Lateness:    argInt(t, d, "lateness", 0),
			Skew:        argInt(t, d, "skew", 0),
			InDoubt:     argInt(t, d, "indoubt", history.NoInDoubt),
			IdleTimeout: argInt(t, d, "idle", 0),
		}
		w, err := New(cfg)
		if err != nil {
			return err.Error()
		}
		s.w, s.m, s.txns = w, newModel(cfg), map[string]history.Txn{}
		return fmt.Sprintf("W=%s", fmtTime(w.Watermark()))
	case "add":
		p := int(argInt(t, d, "p", 0))
		for _, line := range strings.Split(d.Input, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			h, err := history.ParseCompact(line)
			if err != nil || len(h.Txns) != 1 {
				d.Fatalf(t, "%q: %v", line, err)
			}
			x := h.Txns[0]
			x.Pos = history.Pos{}
			if _, ok := s.txns[x.ID]; !ok {
				s.txns[x.ID] = x
			}
			got, want := s.w.Add(p, x), s.m.add(p, x)
			if !sameDead(got, want) {
				d.Fatalf(t, "Add(%s) = %v, model %v", line, got, want)
			}
			if got == nil {
				fmt.Fprintf(&b, "%s: buffered\n", x.ID)
			} else {
				fmt.Fprintf(&b, "%s: %s: %s\n", x.ID, got.Reason, got.Detail)
			}
		}
	case "release":
		got := s.w.Release(nil)
		want := s.m.release(t)
		if !slices.Equal(ids(got), ids(want)) {
			d.Fatalf(t, "release %v, model %v", ids(got), ids(want))
		}
		first := s.w.Stats().Released - uint64(len(got))
		for i := range got {
			fmt.Fprintf(&b, "%d: %s\n", first+uint64(i), got[i].Compact())
		}
		if len(got) == 0 {
			b.WriteString("nothing\n")
		}
		return b.String()
	case "closed":
		got, want := s.w.PopClosed(nil), s.m.popClosed()
		if !slices.Equal(got, want) {
			d.Fatalf(t, "closed %v, model %v", got, want)
		}
		for _, c := range got {
			fmt.Fprintf(&b, "%d %s effEnd=%s\n", c.Seq, c.ID, fmtTime(c.EffEnd))
		}
		if len(got) == 0 {
			b.WriteString("nothing\n")
		}
		return b.String()
	case "timeclosed":
		for _, id := range strings.Fields(d.Input) {
			x, ok := s.txns[id]
			if !ok {
				d.Fatalf(t, "unknown transaction %s", id)
			}
			state := "open"
			if s.w.TimeClosed(&x) {
				state = "closed"
			}
			fmt.Fprintf(&b, "%s: %s\n", id, state)
		}
		return b.String()
	case "idle":
		p := int(argInt(t, d, "p", 0))
		s.w.MarkIdle(p)
		s.m.markIdle(p)
	case "close":
		s.w.Close()
		s.m.closed = true
	case "stats":
		st := s.w.Stats()
		fmt.Fprintf(&b, "W=%s maxStart=%s lag=%d\n", fmtTime(st.Watermark), fmtTime(st.MaxStart), st.Lag)
		fmt.Fprintf(&b, "accepted=%d buffered=%d released=%d open=%d closed=%d ids=%d\n",
			st.Accepted, st.Buffered, st.Released, st.Open, st.Closed, st.IDs)
		for r := range Reason(NumReasons) {
			if st.DeadLetters[r] > 0 {
				fmt.Fprintf(&b, "dead %s=%d\n", r, st.DeadLetters[r])
			}
		}
		fmt.Fprintf(&b, "idle partitions=%d transitions=%d\n", st.IdlePartitions, st.IdleTransitions)
		return b.String()
	default:
		d.Fatalf(t, "unknown command %s", d.Cmd)
	}
	fmt.Fprintf(&b, "W=%s", fmtTime(s.w.Watermark()))
	if idle := s.idle(); idle != "" {
		fmt.Fprintf(&b, " idle=%s", idle)
	}
	return b.String()
}

func (s *script) idle() string {
	var ps []string
	for p := range s.w.Config().Partitions {
		if s.w.Idle(p) {
			ps = append(ps, strconv.Itoa(p))
		}
	}
	return strings.Join(ps, ",")
}

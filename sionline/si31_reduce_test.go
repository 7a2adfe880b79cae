package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// si31Abort is what a reduction's harness panics with where the test
// harness would stop the test.
type si31Abort struct{ msg string }

// si31TB is a testing.TB whose Fatal panics (si31Abort), so that a
// reduction can run the harness on candidates that break it.
type si31TB struct{ testing.TB }

func (si31TB) Helper() {}
func (si31TB) Fatal(args ...any) {
	panic(si31Abort{fmt.Sprint(args...)})
}
func (si31TB) Fatalf(format string, args ...any) {
	panic(si31Abort{fmt.Sprintf(format, args...)})
}

// si31Fails runs case c (its arrival restricted to h's transactions, in
// the drawn order) and says how it disagrees with check or the oracle,
// or "".
func si31Fails(t testing.TB, c si31Case, h *history.History) (why string) {
	defer func() {
		if r := recover(); r != nil {
			if a, ok := r.(si31Abort); ok {
				why = "harness: " + a.msg
				return
			}
			why = fmt.Sprint("panic: ", r)
		}
	}()
	if h.Validate() != nil || len(h.Txns) == 0 {
		return ""
	}
	ids := map[string]int{}
	for i := range h.Txns {
		ids[string(h.Txns[i].ID)] = i
	}
	a := c.a
	a.order = nil
	for _, i := range c.a.order {
		if i < len(c.h.Txns) {
			if j, ok := ids[string(c.h.Txns[i].ID)]; ok {
				a.order = append(a.order, j)
			}
		}
	}
	if len(a.order) != len(h.Txns) {
		return ""
	}
	if a.restart >= len(h.Txns) {
		a.restart = -1
	}
	WaitWindow, segTxns = c.wait, c.seg
	res, err := incremental.Check(context.Background(), h, c.checked, incremental.Config{MaxAnomalies: 1})
	if err != nil {
		return ""
	}
	valid := res.Verdict != incremental.Invalid
	fired, _ := feed(si31TB{t}, h, c.promised, c.wcfg, a)
	if (len(fired) > 0) == valid {
		return fmt.Sprintf("%d alerts, check says %s", len(fired), res.Verdict)
	}
	for _, al := range fired {
		if err := oracle.CheckCore(h, c.checked, al.Core); err != nil {
			return fmt.Sprintf("core %v: %v", al.Core, err)
		}
		if !al.NeedsRealtime && c.promised.Level != c.checked.Level {
			if ok, _, err := oracle.Check(oracle.Project(released(h, al.Watermark), c.promised, al.Core), c.promised); err == nil && ok {
				return fmt.Sprintf("core %v without needs_realtime satisfies %s", al.Core, c.promised.Level)
			}
		}
	}
	return ""
}

// TestSI31Reduce reduces one failing case of TestSIAgreesUnderSchedules
// to a smallest history (transactions, then operations, removed while it
// still fails the same way): STREAMCHECK_SI31_REDUCE=level:seed:index,
// e.g. strong-snapshot-isolation:31:163. Skipped without it.
func TestSI31Reduce(t *testing.T) {
	spec := os.Getenv("STREAMCHECK_SI31_REDUCE")
	if spec == "" {
		t.Skip("STREAMCHECK_SI31_REDUCE=level:seed:index names the case to reduce")
	}
	var name string
	var seed uint64
	var index int
	if _, err := fmt.Sscanf(strings.ReplaceAll(spec, ":", " "), "%s %d %d", &name, &seed, &index); err != nil {
		t.Fatal(err)
	}
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	for _, d := range history.Levels() {
		if d.Name != name {
			continue
		}
		rng := rand.New(rand.NewPCG(seed, 3128+uint64(d.Level)))
		var c si31Case
		for i := 0; i <= index; i++ {
			c = si31Draw(rng, d.Level)
		}
		why := si31Fails(t, c, c.h)
		if why == "" {
			t.Fatalf("case %s does not fail", spec)
		}
		kind := strings.SplitN(why, " ", 2)[0]
		same := func(h *history.History) bool {
			w := si31Fails(t, c, h)
			return w != "" && strings.SplitN(w, " ", 2)[0] == kind
		}
		h := &history.History{Txns: slices.Clone(c.h.Txns)}
		for changed := true; changed; {
			changed = false
			for i := 0; i < len(h.Txns); i++ {
				try := &history.History{Txns: slices.Delete(slices.Clone(h.Txns), i, i+1)}
				if same(try) {
					h, changed = try, true
					i--
				}
			}
			for i := 0; i < len(h.Txns); i++ {
				for k := 0; k < len(h.Txns[i].Ops); k++ {
					try := &history.History{Txns: slices.Clone(h.Txns)}
					try.Txns[i].Ops = slices.Delete(slices.Clone(h.Txns[i].Ops), k, k+1)
					if same(try) {
						h, changed = try, true
						k--
					}
				}
			}
		}
		t.Logf("%s: %s\nreduced (%s):\n%s", spec, c, si31Fails(t, c, h), dump(h))
		return
	}
	t.Fatalf("no level %q", name)
}

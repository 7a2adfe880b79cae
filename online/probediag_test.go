package online

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/solver"
)

func TestProbeDiag(t *testing.T) {
	f := os.Getenv("PROBEDIAG_FILE")
	if f == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("PROBEDIAG_N"))
	h, _, err := ingest.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) > n {
		h.Txns = h.Txns[:n]
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 60_000_000_000
	opts.InitialState = history.InitialEmpty
	txns := byStart(h)
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	dumpFrom, _ := strconv.Atoi(os.Getenv("PROBEDIAG_DUMP"))
	dumping := false
	repeats := 0
	shown := 0
	edgeUndecidedTrace = func(s *evictStep, tt, u int32, a, b solver.Lit, two bool) {
		if !dumping || shown >= 12 {
			return
		}
		shown++
		r, e := s.r, s.e
		desc := func(x int32) string {
			if x < 0 {
				return "F"
			}
			i := r.pos[x]
			return fmt.Sprintf("%s[pos %d closed %v ghost %v sbs %v]", r.h.Txns[x].Compact(), i, s.closedAt(x), r.ghost[x], i >= 0 && s.o.closedBySession(i))
		}
		t.Logf("UNDECIDED edge %s -- %s two=%v", desc(tt), desc(u), two)
		lit := func(l solver.Lit) {
			v, fixed := e.Solver().Fixed(l)
			m := e.Solver().Value(l)
			t.Logf("  lit %v fixed=%v/%v model=%v", l, fixed, v, m)
			for ri := range e.Reads() {
				rv := &e.Reads()[ri]
				for ci, rl := range e.Rfs(rv) {
					if solver.Lit(rl) == l || solver.Lit(rl) == l.Not() {
						cs := ""
						for _, c := range e.Cands(rv) {
							if c >= 0 {
								cs += " " + r.h.Txns[c].ID
							} else {
								cs += fmt.Sprintf(" %d", c)
							}
						}
						t.Logf("   = rf: reader %s cand %d of [%s]", r.h.Txns[rv.Txn()].ID, ci, cs)
					}
				}
			}
			for _, pv := range e.Pairs() {
				if solver.Lit(pv.X()) == l || solver.Lit(pv.X()) == l.Not() {
					t.Logf("   = pair %s < %s", desc(pv.A()), desc(pv.B()))
				}
			}
			if l == solver.Lit(incremental.LitTrue) {
				t.Logf("   = true")
			}
		}
		lit(a)
		if two {
			lit(b)
		}
	}
	defer func() { edgeUndecidedTrace = nil; backoffOff = false }()
	backoffOff = os.Getenv("PROBEDIAG_NOBACKOFF") != ""
	probes := map[string][2]int{}
	probeTrace = func(kind string, decided bool) {
		pcs := make([]uintptr, 8)
		n := runtime.Callers(3, pcs)
		fr := runtime.CallersFrames(pcs[:n])
		name := kind
		for {
			f, more := fr.Next()
			fn := f.Function[strings.LastIndex(f.Function, ".")+1:]
			if fn != "decide" && fn != "forced" && fn != "edgeDecided" && fn != "func1" && fn != "commitOf" && fn != "noCommit" && fn != "commitOpen" {
				name += "<" + fn
				break
			}
			name += "<" + fn
			if !more {
				break
			}
		}
		c := probes[name]
		if decided {
			c[0]++
		} else {
			c[1]++
		}
		probes[name] = c
	}
	defer func() { probeTrace = nil }()
	seen := map[[2]string]int{}
	step := 0
	fshown := 0
	forcedTrace = func(pr *prober, from, to solver.Node, proven bool) {
		r := pr.r
		a, b := r.e.NodeTxn()[from], r.e.NodeTxn()[to]
		if a < 0 || b < 0 {
			return
		}
		key := [2]string{r.h.Txns[a].ID, r.h.Txns[b].ID}
		if last, ok := seen[key]; ok && last < step {
			repeats++
		}
		seen[key] = step
		if dumping && fshown < 10 {
			fshown++
			cl := pr.cl
			ida, idb := -2, -2
			if cl != nil {
				ida, idb = int(cl.id[from]), int(cl.id[to])
			}
			t.Logf("FORCED %s (ghost %v pos %d cl %d) -> %s (ghost %v pos %d cl %d) proven %v hasClosure %v", r.h.Txns[a].Compact(), r.ghost[a], r.pos[a], ida, r.h.Txns[b].Compact(), r.ghost[b], r.pos[b], idb, proven, pr.live != nil)
		}
	}
	defer func() { forcedTrace = nil }()
	bstat := map[string][3]int{}
	backoffTrace = func(kind string, ok bool, spent int) {
		c := bstat[kind]
		if ok {
			c[0]++
		} else {
			c[1]++
		}
		c[2] += spent
		bstat[kind] = c
	}
	defer func() { backoffTrace = nil }()
	t0 := float64(cpuNanos()) / 1e9
	feedInStartOrder(o, opts, txns, func(i int) {
		if (i+1)%256 == 0 {
			dumping = dumpFrom > 0 && i+1 >= dumpFrom && shown < 12
			step++
			if _, err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
			st := o.Stats()
			if (i+1)%2048 == 0 {
				t.Logf("probes (decided, undecided) over the last 8 steps: %v", probes)
				clear(probes)
				t.Logf("forced repeats: %d; r2 by backoff kind (ok, not, probes): %v", repeats, bstat)
				clear(bstat)
				repeats = 0
				by := ""
				for r, c := range st.PinnedBy {
					if c > 0 {
						by += fmt.Sprintf(" %s:%d", PinReason(r), c)
					}
				}
				t.Logf("txns=%d cpu=%.1f window=%d pinned=%d ghosts=%d backoff=%d%s", i+1, float64(cpuNanos())/1e9-t0, st.Window, st.Pinned, st.Ghosts, len(o.ev.Backoff), by)
			}
		}
	})
}

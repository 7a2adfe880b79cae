package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// naiveJoinValues and naiveListSpecial are the list text and the list
// verdicts as they were written before issue 20 item 6 made them linear:
// the oracles of TestListTextAgreesWithNaive.
func naiveJoinValues(vs []history.Value) string {
	s := "["
	for i, v := range vs {
		if i > 0 {
			s += " "
		}
		s += string(v)
	}
	return s + "]"
}

func naiveListSpecial(p *prepared, t int32, r *pread) (string, string) {
	h := p.h
	id := h.Txns[t].ID
	k := unq(p.keys[r.key])
	count := map[history.Value]int{}
	for _, el := range r.lr.list {
		count[el]++
	}
	for _, el := range r.lr.list {
		var appended, committed int
		var aborted []string
		for _, a := range p.appendersOf[r.key][el] {
			if a == t {
				continue
			}
			n := 0
			for _, x := range p.txns[a].appendsTo(r.key) {
				if x == el {
					n++
				}
			}
			if n == 0 {
				for _, op := range h.Txns[a].Ops {
					if op.Kind == history.Append && op.Key == p.keys[r.key] && op.Value == el {
						n++
					}
				}
			}
			appended += n
			if h.Txns[a].Status == history.Aborted {
				aborted = append(aborted, h.Txns[a].ID)
			} else {
				committed += n
			}
		}
		if p.opts.InitialState == history.InitialUnknown {
			continue
		}
		switch {
		case appended == 0:
			return history.GarbageRead, fmt.Sprintf("%s read %s=%s, whose element %s nobody appended.", id, k, naiveJoinValues(r.lr.list), el)
		case committed == 0:
			return history.G1a, fmt.Sprintf("%s read %s=%s, whose element %s only aborted %s appended.", id, k, naiveJoinValues(r.lr.list), el, strings.Join(aborted, ", "))
		case count[el] > committed:
			return history.DuplicateElements, fmt.Sprintf("%s read %s=%s, where %s occurs %d times but was appended %d times.", id, k, naiveJoinValues(r.lr.list), el, count[el], committed)
		}
	}
	return "", ""
}

// TestListTextAgreesWithNaive holds the linear list text and list
// verdicts (joinValues, listSpecial) to the quadratic ones they replaced,
// on every list read of random tiny histories (aborted and unknown
// appenders, duplicate elements, garbage elements, both initial states)
// and on long lists one transaction appended, where the old walk was
// quadratic.
func TestListTextAgreesWithNaive(t *testing.T) {
	cfg := oracle.DefaultTinyConfig()
	cfg.Timestamps, cfg.Sessions, cfg.Lists, cfg.Unknowns, cfg.Aborts = true, true, true, true, true
	rng := rand.New(rand.NewPCG(20, 6))
	var reads, special int
	compare := func(h *history.History, opts history.Options) {
		t.Helper()
		p := prepare(h, opts)
		for ti := range h.Txns {
			for ri := range p.txns[ti].reads {
				r := &p.txns[ti].reads[ri]
				if !r.isList() {
					continue
				}
				reads++
				if got, want := joinValues(r.lr.list), naiveJoinValues(r.lr.list); got != want {
					t.Fatalf("joinValues = %q, want %q", got, want)
				}
				gn, gt := listSpecial(context.Background(), p, int32(ti), r)
				wn, wt := naiveListSpecial(p, int32(ti), r)
				if gn != wn || gt != wt {
					t.Fatalf("listSpecial(%s) = %q %q, want %q %q\n%s", h.Txns[ti].ID, gn, gt, wn, wt, dump(h))
				}
				if gn != "" {
					special++
				}
			}
		}
	}
	for i := 0; i < tinyCount(2000); i++ {
		cfg.InitialValues = i%4 == 3
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		opts := history.DefaultOptions()
		if cfg.InitialValues {
			opts.InitialState = history.InitialUnknown
		}
		compare(h, opts)
	}
	for _, shape := range []string{"valid", "g-single", "garbage"} {
		compare(gen.ListRead(3000, 3, shape), history.DefaultOptions())
	}
	if joinValues(nil) != "[]" {
		t.Fatalf("joinValues(nil) = %q", joinValues(nil))
	}
	t.Logf("%d list reads, %d with a verdict without search", reads, special)
	if special == 0 {
		t.Fatal("no list read had a verdict without search: the generator no longer covers listSpecial")
	}
}

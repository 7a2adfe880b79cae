package online

import (
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestRMWGrowth feeds $STREAMCHECK_RMW_FILE (rmw100k, say) through the
// evicting engine as `run --lateness 10ms --initial-state empty` sees it
// (a step every 800 transactions, about run's 100 ms tick on that
// stream) and logs every $STREAMCHECK_GROWTH_EVERY transactions what the
// instance holds: window members (unknowns among them), ghosts by kind
// (skeletons, tail ghosts, tail ghosts of a key an unknown member
// appends to), kept orders, and why members stayed, by reason (the
// pin trace, its variable parts cut): growthRun's lines and its own. A
// measurement, skipped without the variable.
//
//	STREAMCHECK_RMW_FILE=rmw100k.jsonl go test ./online -run TestRMWGrowth -v -timeout 1h
func TestRMWGrowth(t *testing.T) {
	num := regexp.MustCompile(`[A-Za-z]*[0-9][^ ]*`)
	why := map[string]int{}
	pinTrace = func(_ *history.Txn, reason string) { why[num.ReplaceAllString(reason, "#")]++ }
	skipped, tried := 0, 0
	tailRetryCount = func(skip bool) {
		if skip {
			skipped++
		} else {
			tried++
		}
	}
	defer func() { pinTrace, tailRetryCount = nil, nil }()
	growthRun(t, "STREAMCHECK_RMW_FILE", history.InitialEmpty, func(o *Online) {
		st := &o.ev
		// The keys an unknown window member appends to.
		unknowns, unkKeys := 0, map[history.Key]bool{}
		dec := map[string]int{}
		for _, i := range st.windowList() {
			tx := o.txnAt(i)
			if tx.Status != history.Unknown {
				continue
			}
			unknowns++
			c, ok := st.Decided[i]
			_, anch := o.doubt.closedBy[i]
			dec["decided="+strconv.FormatBool(ok)+" committed="+strconv.FormatBool(c)+" closedBySession="+strconv.FormatBool(anch)]++
			for _, op := range tx.Ops {
				if op.Kind == history.Append {
					unkKeys[op.Key] = true
				}
			}
		}
		named := map[int]bool{}
		for _, k := range st.Kept {
			named[k[0]], named[k[1]] = true, true
		}
		// Keys some window member reads (a list read of it).
		readKeys := map[history.Key]bool{}
		for _, i := range st.windowList() {
			for _, op := range o.txnAt(i).Ops {
				if op.Kind == history.Read {
					readKeys[op.Key] = true
				}
			}
		}
		behind, behindNamed, behindRead := 0, 0, 0
		for i, ops := range st.Tail {
			for _, op := range ops {
				if unkKeys[op.Key] {
					behind++
					if named[i] {
						behindNamed++
					}
					break
				}
			}
			for _, op := range ops {
				if unkKeys[op.Key] && readKeys[op.Key] {
					behindRead++
					break
				}
			}
		}
		t.Logf("   window members unknown %d: %v; tail retries tried %d, skipped %d", unknowns, dec, tried, skipped)
		t.Logf("   tail ghosts behind an unknown appender %d: named by a kept order %d, key read by a member %d", behind, behindNamed, behindRead)
		type kv struct {
			k string
			v int
		}
		var kvs []kv
		for k, v := range why {
			kvs = append(kvs, kv{k, v})
		}
		sort.Slice(kvs, func(a, b int) bool { return kvs[a].v > kvs[b].v })
		for j, e := range kvs {
			if j == 12 {
				break
			}
			t.Logf("   %8d %s", e.v, e.k)
		}
		clear(why)
	})
}

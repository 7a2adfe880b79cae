package online

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// TestRMWGrowth feeds $STREAMCHECK_RMW_FILE (rmw100k, say) through the
// evicting engine as `run --lateness 10ms --initial-state empty` sees it
// (a step every 800 transactions, about run's 100 ms tick on that
// stream) and logs every $STREAMCHECK_GROWTH_EVERY transactions what the
// instance holds: window members (unknowns among them), ghosts by kind
// (skeletons, tail ghosts, tail ghosts of a key an unknown member
// appends to), kept orders, and why members stayed, by reason (the
// pin trace, its variable parts cut). A measurement, skipped without
// the variable.
//
//	STREAMCHECK_RMW_FILE=rmw100k.jsonl go test ./online -run TestRMWGrowth -v -timeout 1h
func TestRMWGrowth(t *testing.T) {
	path := os.Getenv("STREAMCHECK_RMW_FILE")
	if path == "" {
		t.Skip("STREAMCHECK_RMW_FILE not set")
	}
	every := 10000
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_GROWTH_EVERY")); err == nil && n > 0 {
		every = n
	}
	h, _, err := ingest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialEmpty
	opts.InDoubt = int64(time.Minute)
	txns := byStart(h)
	h = nil
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	start := time.Now()
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
	step := func() {
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	log := func(n int) {
		s := o.Stats()
		st := &o.ev
		skeletons := 0
		for _, gk := range st.GhostKeys {
			if len(gk) == 0 {
				skeletons++
			}
		}
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
		behindNamed, behindRead := 0, 0
		for i, ops := range st.Tail {
			if named[i] {
				for _, op := range ops {
					if unkKeys[op.Key] {
						behindNamed++
						break
					}
				}
			}
			for _, op := range ops {
				if unkKeys[op.Key] && readKeys[op.Key] {
					behindRead++
					break
				}
			}
		}
		t.Logf("   unknown members: %v; tail retries tried %d, skipped %d", dec, tried, skipped)
		t.Logf("   behind an unknown appender: named by a kept order %d, key read by a member %d", behindNamed, behindRead)
		behind := 0
		for _, ops := range st.Tail {
			for _, op := range ops {
				if unkKeys[op.Key] {
					behind++
					break
				}
			}
		}
		t.Logf("txns %d: window %d (unknown %d), ghosts %d, skeletons %d, tail %d (behind an unknown appender %d), kept %d, alerts %d, disagreements %d (%.0f s)",
			n, s.Window, unknowns, s.Ghosts, skeletons, len(st.Tail), behind, len(st.Kept), s.Alerts, s.Disagreements, time.Since(start).Seconds())
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
	}
	feedInStartOrder(o, opts, txns, func(i int) {
		if (i+1)%800 == 0 {
			step()
		}
		if (i+1)%every == 0 {
			log(i + 1)
		}
	})
	step()
	log(len(txns))
}

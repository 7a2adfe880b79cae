package online

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// listReadHistory is a history of one long list read: appenders
// transactions append n elements between them, in order, and one
// transaction after all of them reads the whole list. Each transaction
// follows the previous one by 10 ns. The shape adds what makes the read
// part of an anomaly: "g-single" has the first appender write x=1 and the
// reader read x absent (a cycle through the list read, so the core
// search and the explanation see the list); "garbage" appends one
// element to the read that nobody appended (found by the describe path).
func listReadHistory(n, appenders int, shape string) *history.History {
	h := &history.History{}
	per := n / appenders
	var list []history.Value
	at := int64(1000)
	for a := 0; a < appenders; a++ {
		t := history.Txn{ID: "a" + strconv.Itoa(a), Session: "s" + strconv.Itoa(a), HasSession: true, HasTime: true, Start: at, End: at + 5, Status: history.Committed}
		at += 10
		if a == 0 && shape == "g-single" {
			t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: history.StringValue("x"), Value: history.IntValue(1)})
		}
		for i := 0; i < per; i++ {
			v := history.IntValue(int64(len(list)))
			list = append(list, v)
			t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: history.StringValue("l"), Value: v})
		}
		h.Txns = append(h.Txns, t)
	}
	r := history.Txn{ID: "r", Session: "reader", HasSession: true, HasTime: true, Start: at, End: at + 5, Status: history.Committed}
	switch shape {
	case "g-single":
		r.Ops = append(r.Ops, history.Op{Kind: history.Read, Key: history.StringValue("x"), Value: history.Null})
	case "garbage":
		list = append(list, history.IntValue(-1))
	}
	r.Ops = append(r.Ops, history.Op{Kind: history.Read, IsList: true, Key: history.StringValue("l"), List: list})
	h.Txns = append(h.Txns, r)
	return h
}

// BenchmarkListReadOnline is BenchmarkListRead (package incremental) for
// the online engine: one Step of the evicting engine over the same
// histories (the generator is a copy of that package's test helper).
//
//	go test ./online -run '^$' -bench ListReadOnline -benchtime 1x
func BenchmarkListReadOnline(b *testing.B) {
	type shape struct {
		name      string
		appenders int
		init      history.InitialState
		invalid   bool
	}
	shapes := []shape{
		{"valid", 1, history.InitialEmpty, false},
		{"valid", 100, history.InitialUnknown, false},
		{"g-single", 1, history.InitialEmpty, true},
		{"garbage", 1, history.InitialEmpty, true},
	}
	for _, n := range []int{10000, 100000, 1000000} {
		for _, sh := range shapes {
			var h *history.History
			opts := history.DefaultOptions()
			opts.InitialState = sh.init
			name := fmt.Sprintf("%s/elements=%.0e/appenders=%d/initial=%s", sh.name, float64(n), sh.appenders, sh.init)
			b.Run("online/"+name, func(b *testing.B) {
				if h == nil {
					h = listReadHistory(n, sh.appenders, sh.name)
				}
				b.ResetTimer()
				cpu0 := cpuNanos()
				for b.Loop() {
					o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
					o.Release(h.Txns...)
					o.CloseAll()
					alerts, err := o.Step(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if got := len(alerts) > 0; got != sh.invalid {
						b.Fatalf("%d alerts, want invalid %v", len(alerts), sh.invalid)
					}
				}
				b.ReportMetric(float64(cpuNanos()-cpu0)/1e9/float64(b.N), "cpu-s/op")
			})
		}
	}
}

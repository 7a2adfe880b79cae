package gen

import (
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// The histories below are the stress shapes the offline and the online
// checkers' benchmarks share (incremental's and online's tests cannot
// import each other's test files, so the one copy lives here).

// ListRead is a history of one long list read: appenders transactions
// append n elements between them, in order, and one transaction after all
// of them reads the whole list. Each transaction follows the previous one
// by 10 ns. The shape adds what makes the read part of an anomaly:
// "g-single" has the first appender write x=1 and the reader read x
// absent (a cycle through the list read, so the core search and the
// explanation see the list); "garbage" appends one element to the read
// that nobody appended (found by the describe path); any other shape is
// valid.
func ListRead(n, appenders int, shape string) *history.History {
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

// Burst is a generated history (the mixed workload: registers and lists,
// 32 sessions, 16 concurrent) of n transactions lasting 8 µs on average,
// about one starting every microsecond: the whole of it falls inside one
// tick of `run`.
func Burst(n int) (*history.History, error) {
	cfg, err := Preset("mixed")
	if err != nil {
		return nil, err
	}
	cfg.Txns, cfg.Seed, cfg.Latency = n, 1, 8000
	h, _, err := Generate(cfg)
	return h, err
}

package ingest_test

import (
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

func ExampleNativeDecoder_Decode() {
	var d ingest.NativeDecoder
	line := []byte(`{"session":"c7","id":"c7-42","start":1763719200123456789,"end":1763719200125000000,"status":"committed","ops":[["r","x",3],["w","x",1.0],["append","l","1"],["r","l",[3,17]]]}`)
	t, err := d.Decode(line, history.Pos{Source: "events.jsonl", Line: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.ID, t.Session, t.Start, t.Status)
	for _, op := range t.Ops {
		fmt.Println(op)
	}
	fmt.Printf("%s\n", ingest.AppendNative(nil, &t))
	// Output:
	// c7-42 c7 1763719200123456789 committed
	// r "x" 3
	// w "x" 1.0
	// append "l" "1"
	// r "l" [3 17]
	// {"session":"c7","id":"c7-42","start":1763719200123456789,"end":1763719200125000000,"status":"committed","ops":[["r","x",3],["w","x",1.0],["append","l","1"],["r","l",[3,17]]]}
}

func ExampleReadHistory() {
	elle := `{:index 0, :time 10, :type :invoke, :process 0, :f :txn, :value [[:append 5 1] [:r 5 nil]]}
{:index 1, :time 20, :type :ok, :process 0, :f :txn, :value [[:append 5 1] [:r 5 [1]]]}
{:index 2, :time 30, :type :invoke, :process 1, :f :txn, :value [[:w 6 2]]}`
	h, format, err := ingest.ReadHistory(strings.NewReader(elle), "history.edn")
	if err != nil {
		panic(err)
	}
	fmt.Println(format)
	for _, t := range h.Txns {
		fmt.Println(t.Compact())
	}
	_, _, err = ingest.ReadHistory(strings.NewReader(`{"status":"committed","ops":[["w","x",9223372036854775808]]}`), "events.jsonl")
	fmt.Println(err)
	// Output:
	// elle-edn
	// 0[10,20] append 5 1, r 5 [1] (session 0)
	// 2[30,30] w 6 2 (unknown, session 1)
	// events.jsonl:1: field ops[0]: column 39: integer 9223372036854775808 is out of int64 range
}

package window_test

import (
	"fmt"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/window"
)

// The engine's loop on history G of docs/SEMANTICS.md §5, arriving T, R2, U on
// one partition with a lateness that covers U.
func Example() {
	w, err := window.New(window.Config{Partitions: 1, Lateness: 205, InDoubt: history.NoInDoubt})
	if err != nil {
		panic(err)
	}
	h, _ := history.ParseCompact("T[10,20] w x1 · R2[210,220] r x1 · U[5,200] w x2")
	var released []history.Txn
	var closed []window.Closing
	step := func() {
		released = w.Release(released[:0])
		closed = w.PopClosed(closed[:0])
		for _, t := range released {
			fmt.Println("release", t.ID)
		}
		for _, c := range closed {
			fmt.Println("closed", c.ID)
		}
	}
	for _, t := range h.Txns {
		if d := w.Add(0, t); d != nil {
			fmt.Println("dead letter", d)
		}
		step()
	}
	w.Close()
	step()
	// Output:
	// release U
	// release T
	// release R2
	// closed T
	// closed U
	// closed R2
}

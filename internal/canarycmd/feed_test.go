package canarycmd

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestCheckerFedWithoutJSON fails if the in-process checker is fed through
// a JSON pipe again (issue 21, acceptance 2): the package's code must reach
// run only through runcmd.MainTxns, and use no io.Pipe and no JSON Lines
// sink other than for --out/--record files.
func TestCheckerFedWithoutJSON(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok {
					calls[x.Name+"."+sel.Sel.Name]++
				}
			}
			return true
		})
	}
	for _, banned := range []string{"runcmd.Main", "io.Pipe", "json.Marshal", "ingest.AppendNative"} {
		if calls[banned] > 0 {
			t.Errorf("canarycmd uses %s: the checker must be handed the recorder's transactions (runcmd.MainTxns), not their JSON", banned)
		}
	}
	if calls["runcmd.MainTxns"] != 1 {
		t.Errorf("canarycmd calls runcmd.MainTxns %d times, want 1", calls["runcmd.MainTxns"])
	}
	// One NewJSONLines call: the loop over the --out and --record files.
	if n := calls["record.NewJSONLines"]; n > 1 {
		t.Errorf("record.NewJSONLines used %d times, want at most 1 (the --out/--record files)", n)
	}
}

// TestCheckerFeedPassesTxnsAsTheyAre: what the recorder emits reaches the
// checker's channel unchanged and in order, including what JSON could not
// carry exactly (invalid UTF-8 in an id, a position); once the checker
// has stopped, emitting fails with errCheckerStopped and Close returns.
func TestCheckerFeedPassesTxnsAsTheyAre(t *testing.T) {
	f := newCheckerFeed(4)
	want := []history.Txn{
		{ID: "a\xff", Session: "s", HasSession: true, Start: 1, End: 2, HasTime: true,
			Ops: []history.Op{{Kind: history.Write, Key: "1", Value: "2"}}},
		{ID: "b", Pos: history.Pos{Source: "x", Line: 7, Offset: 9}},
	}
	got := make(chan []history.Txn)
	go func() {
		var g []history.Txn
		for tx := range f.txns {
			g = append(g, tx)
		}
		got <- g
	}()
	for i := range want {
		tx := want[i]
		if err := f.Emit(&tx); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if g := <-got; !reflect.DeepEqual(g, want) {
		t.Fatalf("checker got %#v, want %#v", g, want)
	}

	// A checker that has returned reads nothing more.
	f = newCheckerFeed(1)
	f.stop()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = f.Emit(&history.Txn{ID: "x"})
	}
	if !errors.Is(err, errCheckerStopped) {
		t.Fatalf("emit after the checker stopped: %v, want errCheckerStopped", err)
	}
	if err := f.Close(); !errors.Is(err, errCheckerStopped) {
		t.Fatalf("Close: %v, want errCheckerStopped", err)
	}
}

package record_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamcheck/streamcheck/internal/checkcmd"
	"github.com/streamcheck/streamcheck/record"
)

// wallet is an application with a classic bug: a deposit reads the
// balance, computes the new one and writes it back, and nothing stops two
// deposits from reading the same balance.
type wallet struct{ balance int64 }

// Example_checkFile records the buggy wallet's transactions into a native
// JSON Lines file and runs `streamcheck check` on it (the same code as
// the command, here through its package), which proves the lost deposit.
func Example_checkFile() {
	dir, err := os.MkdirTemp("", "record-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "wallet.jsonl")
	sink, err := record.CreateJSONLines(path)
	if err != nil {
		panic(err)
	}
	rec := record.New(sink, record.Options{})
	w := &wallet{}
	open := rec.Begin("setup") // the account is opened with 0
	open.Write("balance", w.balance)
	open.Commit()

	// Two deposits interleave: both read 0, then each writes its own sum.
	alice, bob := rec.Begin("alice"), rec.Begin("bob")
	alice.Read("balance", w.balance)
	bob.Read("balance", w.balance)
	readA, readB := w.balance, w.balance
	w.balance = readA + 50
	alice.Write("balance", w.balance)
	alice.Commit()
	w.balance = readB + 20 // alice's 50 is lost
	bob.Write("balance", w.balance)
	bob.Commit()
	if err := sink.Close(); err != nil {
		panic(err)
	}

	// $ streamcheck check --level strict-serializable wallet.jsonl
	var out bytes.Buffer
	code := checkcmd.Main([]string{"--level", "strict-serializable", path}, nil, nil, &out, os.Stderr)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "INVALID") || strings.HasPrefix(l, "anomaly") {
			fmt.Println(l)
		}
	}
	fmt.Println("exit", code)
	// Output:
	// INVALID: not strict-serializable (level strict-serializable, skew 0s, in-doubt ∞, initial state empty): 1 anomaly in 3 transactions
	// anomaly 1: lost-update (G2-item)
	// exit 1
}

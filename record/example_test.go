package record_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/record"
)

// bank is the example's application: two accounts in memory, each
// transfer running under one lock, as a serializable database would run
// it.
type bank struct {
	mu       sync.Mutex
	balances map[string]int64
}

// transfer moves amount from one account to the other, recording what it
// reads and writes; it refuses to overdraw (the application rolls back).
func (b *bank) transfer(rec *record.Recorder, session, from, to string, amount int64) error {
	tx := rec.Begin(session) // before the transaction starts
	b.mu.Lock()
	src, dst := b.balances[from], b.balances[to]
	tx.Read(from, src)
	tx.Read(to, dst)
	if src < amount {
		b.mu.Unlock()
		return tx.Abort() // nothing was written
	}
	b.balances[from], b.balances[to] = src-amount, dst+amount
	tx.Write(from, src-amount)
	tx.Write(to, dst+amount)
	b.mu.Unlock()
	return tx.Commit() // after the commit is done
}

// Example records a small application's transactions into a native JSON
// Lines file, reads it back as `streamcheck check` does and checks it.
func Example() {
	dir, err := os.MkdirTemp("", "record-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bank.jsonl")
	sink, err := record.CreateJSONLines(path)
	if err != nil {
		panic(err)
	}
	rec := record.New(sink, record.Options{})

	b := &bank{balances: map[string]int64{}}
	open := rec.Begin("setup")
	b.balances["alice"], b.balances["bob"] = 50, 50
	open.Write("alice", 50)
	open.Write("bob", 50)
	open.Commit()

	var wg sync.WaitGroup
	for i, pair := range [][2]string{{"alice", "bob"}, {"bob", "alice"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 4; n++ {
				// Teller 0 sends 30 at a time, teller 1 sends 20: some
				// transfers find too little money and abort.
				b.transfer(rec, fmt.Sprintf("teller-%d", i), pair[0], pair[1], int64(30-10*i))
			}
		}()
	}
	wg.Wait()
	if err := sink.Close(); err != nil {
		panic(err)
	}

	h, format, err := ingest.ReadFile(path)
	if err != nil {
		panic(err)
	}
	opts := history.Options{Level: history.StrictSerializable, Skew: 0, InDoubt: history.NoInDoubt}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d %s transactions: %s\n", len(h.Txns), format, res.Verdict)
	// Output: 9 native transactions: valid
}

// Example_databaseSQL shows the recording pattern around database/sql
// (PostgreSQL through pgx); it needs a server, so it is compiled, not run.
func Example_databaseSQL() {
	db, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	sink, err := record.CreateJSONLines("app-history.jsonl")
	if err != nil {
		panic(err)
	}
	defer sink.Close()
	rec := record.New(sink, record.Options{})
	ctx := context.Background()

	increment := func(session string, k int64) error {
		rt := rec.Begin(session) // before BEGIN is sent
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			rt.Abort()
			return err
		}
		var v sql.NullInt64
		err = tx.QueryRowContext(ctx, "SELECT v FROM kv WHERE k = $1", k).Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			tx.Rollback()
			rt.Abort() // COMMIT is never sent: nothing can be visible
			return err
		}
		rt.Read(k, v) // no row: absent
		next := v.Int64 + 1
		if _, err := tx.ExecContext(ctx, "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v", k, next); err != nil {
			tx.Rollback()
			rt.Abort()
			return err
		}
		rt.Write(k, next)
		err = tx.Commit()
		rt.Finish(record.PgxOutcome(err)) // committed, aborted or unknown
		return err
	}
	for i := 0; i < 10; i++ {
		if err := increment("worker-1", 1); record.PgxRetryable(err) {
			continue // a new attempt is a new transaction
		}
	}
}

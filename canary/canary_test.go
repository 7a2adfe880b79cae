package canary

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/realdbtest"
	"github.com/streamcheck/streamcheck/record"
)

// The servers of README.md "Testing against real parts".
var dsns = map[Dialect]string{
	Postgres: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	MySQL:    "mysql://root@tcp(127.0.0.1:3306)/test",
}

func TestParseDSN(t *testing.T) {
	for _, tc := range []struct {
		in      string
		dialect Dialect
		want    string // substring of the driver DSN, or of the error
		err     bool
	}{
		{in: "postgres://u@h:5432/db?sslmode=disable", dialect: Postgres, want: "postgres://u@h:5432/db"},
		{in: "postgresql://h/db", dialect: Postgres, want: "postgresql://h/db"},
		{in: "mysql://root@tcp(127.0.0.1:3306)/test", dialect: MySQL, want: "clientFoundRows=true"},
		{in: "mariadb://u:pw@tcp(h:3306)/db?timeout=1s", dialect: MySQL, want: "timeout=1s"},
		{in: "mysql://root@tcp(h:3306", err: true, want: "--dsn"},
		{in: "root@tcp(h:3306)/db", err: true, want: "want postgres://"},
		{in: "sqlite://u:secret@x", err: true, want: "…@x"},
	} {
		d, got, err := ParseDSN(tc.in)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseDSN(%q) error %v, want one containing %q", tc.in, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseDSN(%q) error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || d != tc.dialect || !strings.Contains(got, tc.want) {
			t.Errorf("ParseDSN(%q) = %v, %q, %v; want %v and %q", tc.in, d, got, err, tc.dialect, tc.want)
		}
	}
}

func TestParseIsolation(t *testing.T) {
	for in, want := range map[string]sql.IsolationLevel{
		"serializable": sql.LevelSerializable, "READ COMMITTED": sql.LevelReadCommitted,
		"repeatable_read": sql.LevelRepeatableRead, "default": sql.LevelDefault,
	} {
		if got, err := ParseIsolation(in); err != nil || got != want {
			t.Errorf("ParseIsolation(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got, _ := ParseIsolation(IsolationName(want)); got != want {
			t.Errorf("IsolationName(%v) does not read back", want)
		}
	}
	if _, err := ParseIsolation("snapshot"); err == nil || !strings.Contains(err.Error(), "repeatable-read") {
		t.Errorf("ParseIsolation(snapshot): %v, want the list of names", err)
	}
}

// Bad configurations are refused before any connection is tried, with
// the field named.
func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{DSN: "nope"}, "--dsn"},
		{Config{DSN: dsns[Postgres], Clients: -1}, "clients"},
		{Config{DSN: dsns[Postgres], Keys: 1}, "keys"},
		{Config{DSN: dsns[Postgres], Rate: -2}, "rate"},
		{Config{DSN: dsns[Postgres], TxnTimeout: time.Millisecond}, "txn timeout"},
		{Config{DSN: dsns[Postgres], Schema: "a; DROP TABLE x"}, "schema"},
		{Config{DSN: dsns[Postgres], Prefix: "1abc"}, "prefix"},
		{Config{DSN: dsns[Postgres], Workloads: []string{"bank"}}, `unknown workload "bank"`},
		{Config{DSN: dsns[MySQL], SnapshotIsolation: "maybe"}, "snapshot isolation"},
	} {
		_, err := New(context.Background(), tc.cfg, record.New(&record.SliceSink{}, record.Options{}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) error %v, want one naming %q", tc.cfg, err, tc.want)
		}
	}
}

// Zipf heat: row 0 is drawn most; two rows are always different.
func TestKeyChooser(t *testing.T) {
	kc := newKeyChooser(rand.New(rand.NewPCG(1, 2)), 16, 1.1)
	hits := make([]int, 16)
	for i := 0; i < 20000; i++ {
		k := kc.key()
		if k < 0 || k >= 16 {
			t.Fatalf("key %d out of range", k)
		}
		hits[k]++
		if a, b := kc.two(); a == b {
			t.Fatalf("two() = %d, %d", a, b)
		}
	}
	if hits[0] < 2*hits[15] || hits[0] < hits[1] {
		t.Errorf("row 0 is not the hottest: %v", hits)
	}
	u := newKeyChooser(rand.New(rand.NewPCG(1, 2)), 16, 0)
	for i := range hits {
		hits[i] = 0
	}
	for i := 0; i < 16000; i++ {
		hits[u.key()]++
	}
	for k, n := range hits {
		if n < 700 || n > 1300 {
			t.Errorf("uniform row %d drawn %d times of 16000", k, n)
		}
	}
}

func newOrSkip(t *testing.T, cfg Config, rec *record.Recorder) *Canary {
	t.Helper()
	c, err := New(context.Background(), cfg, rec)
	if err != nil {
		// Only opening and pinging the server give "canary: " errors; a
		// configuration error always fails.
		if strings.Contains(err.Error(), "canary: ") {
			realdbtest.Unreachable(t, "server", err)
		}
		t.Fatal(err)
	}
	return c
}

// countTables counts the tables and schemas whose name starts with
// prefix.
func countTables(t *testing.T, d Dialect, prefix string) int {
	t.Helper()
	_, dsn, _ := ParseDSN(dsns[d])
	db, err := sql.Open(d.driver(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ph := "$1"
	if d == MySQL {
		ph = "?"
	}
	var n, m int
	if err := db.QueryRow("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE "+ph, prefix+"%").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE "+ph, prefix+"%").Scan(&m); err != nil {
		t.Fatal(err)
	}
	return n + m
}

// The oracle in one direction: at SERIALIZABLE both servers must give a
// strict serializable history (single node, one client clock, Δ = 1 ms)
// and keep the arithmetic; every transaction the report counts is
// recorded with the same status; the schema the canary created and its
// tables are gone afterwards.
func TestSerializableIsValid(t *testing.T) {
	for _, d := range []Dialect{Postgres, MySQL} {
		t.Run(d.String(), func(t *testing.T) {
			var sink record.SliceSink
			schema := "sc_canary_test_" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
			// The run ends on what it has done, not on a wall-clock budget a
			// loaded machine may miss: once every workload committed a few
			// transactions (enough for the oracle to mean something), or
			// after a generous bound that only a hang reaches.
			const enough = 5
			c := newOrSkip(t, Config{DSN: dsns[d], Isolation: sql.LevelSerializable, Duration: 2 * time.Minute,
				Clients: 6, Keys: 4, Schema: schema, Prefix: schema + "_t"}, record.New(&sink, record.Options{}))
			done := make(chan struct{})
			defer close(done)
			go func() {
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
					}
					snap := c.Snapshot()
					ok := len(snap.Workloads) == len(AllWorkloads)
					for _, w := range snap.Workloads {
						ok = ok && w.Committed >= enough
					}
					if ok {
						c.Stop()
						return
					}
				}
			}()
			rep, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", rep)
			if len(rep.Arithmetic) > 0 {
				t.Fatalf("SERIALIZABLE broke the arithmetic: %v", rep.Arithmetic)
			}
			h := sink.History()
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
			tot := rep.Total()
			got := map[history.Status]int{}
			for _, tx := range h.Txns {
				got[tx.Status]++
			}
			// setup and final are committed and not counted.
			if got[history.Committed] != tot.Committed+2 || got[history.Aborted] != tot.Aborted || got[history.Unknown] != tot.Unknown {
				t.Fatalf("recorded %v, report %+v", got, tot)
			}
			for _, w := range rep.Workloads {
				if w.Committed < enough {
					t.Errorf("workload %s committed %d in %s, want %d before the run ends", w.Name, w.Committed, rep.Elapsed, enough)
				}
			}
			res, err := incremental.Check(context.Background(), h, history.Options{Level: history.StrictSerializable, Skew: int64(time.Millisecond), InDoubt: history.NoInDoubt}, incremental.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != incremental.Valid {
				t.Fatalf("SERIALIZABLE history is %v: %+v", res.Verdict, res.Anomalies)
			}
			if n := countTables(t, d, schema); n != 0 {
				t.Fatalf("%d tables or schemas named %s* left behind", n, schema)
			}
		})
	}
}

// The oracle in the other direction, without the checker: counters at
// PostgreSQL READ COMMITTED under contention lose increments, which the
// final read proves by arithmetic.
func TestReadCommittedLosesIncrements(t *testing.T) {
	var sink record.SliceSink
	c := newOrSkip(t, Config{DSN: dsns[Postgres], Isolation: sql.LevelReadCommitted, Duration: time.Second,
		Clients: 8, Keys: 2, Workloads: []string{Counters}}, record.New(&sink, record.Options{}))
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	if len(rep.Arithmetic) == 0 || !strings.Contains(rep.Arithmetic[0], "lost") {
		t.Fatalf("no lost increment proven: %v", rep.Arithmetic)
	}
	res, err := incremental.Check(context.Background(), sink.History(), history.Options{Level: history.Serializable, InDoubt: history.NoInDoubt}, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("arithmetic proves lost updates, checker says %v", res.Verdict)
	}
}

// An interrupt stops the clients between transactions: no unknown
// outcome, the tables are dropped.
func TestCancelCleansUp(t *testing.T) {
	var sink record.SliceSink
	c := newOrSkip(t, Config{DSN: dsns[Postgres], Isolation: sql.LevelSerializable, Clients: 4}, record.New(&sink, record.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	rep, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total().Unknown != 0 {
		t.Fatalf("an interrupt left %d unknown outcomes", rep.Total().Unknown)
	}
	if err := sink.History().Validate(); err != nil {
		t.Fatal(err)
	}
	if n := countTables(t, Postgres, c.Prefix()); n != 0 {
		t.Fatalf("%d tables of %s left behind", n, c.Prefix())
	}
}

// TestDupValuesNone: with DupValues < 0 every register write is unique in
// the run (so every read names its writer); with the default a quarter of
// the writes repeat 1, 2 or 3, and a run of some length repeats one.
func TestDupValuesNone(t *testing.T) {
	once := func(dup float64, d time.Duration) (n int, repeated bool) {
		var sink record.SliceSink
		c := newOrSkip(t, Config{DSN: dsns[Postgres], Isolation: sql.LevelSerializable, Duration: d,
			Clients: 4, Keys: 4, Workloads: []string{Registers}, DupValues: dup}, record.New(&sink, record.Options{}))
		if _, err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		seen := map[history.Value]bool{}
		for _, tx := range sink.History().Txns {
			for _, op := range tx.Ops {
				if op.Kind != history.Write {
					continue
				}
				n++
				repeated = repeated || seen[op.Value]
				seen[op.Value] = true
			}
		}
		return n, repeated
	}
	// The claim is about 40 writes, not about how fast a loaded machine
	// makes them: a run too short to reach 40 is run again, longer.
	writes := func(dup float64) (n int, repeated bool) {
		for d := 500 * time.Millisecond; ; d *= 4 {
			if n, repeated = once(dup, d); n >= 40 || d >= 32*time.Second {
				return n, repeated
			}
		}
	}
	if n, rep := writes(-1); n < 40 || rep {
		t.Fatalf("DupValues -1: %d writes, a value repeated: %v; want >= 40 writes, none repeated", n, rep)
	}
	if n, rep := writes(0); n >= 40 && !rep {
		t.Fatalf("default DupValues: %d writes and no value repeated; want repeats of 1, 2, 3", n)
	}
}

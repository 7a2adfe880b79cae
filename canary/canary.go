package canary

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/record"
)

// Config shapes a canary run. Zero fields take the defaults noted.
type Config struct {
	// DSN is postgres://... or mysql://user@tcp(host:port)/db (ParseDSN).
	DSN string
	// Isolation is requested for every transaction; sql.LevelDefault
	// requests nothing (the server's default).
	Isolation sql.IsolationLevel
	// SnapshotIsolation, "ON" or "OFF", sets MySQL/MariaDB's
	// innodb_snapshot_isolation in every session; empty leaves the
	// server's value. OFF makes REPEATABLE READ lose updates as MariaDB
	// did before 11.6, on servers without the variable too.
	SnapshotIsolation string
	// Workloads to mix (AllWorkloads when empty); every transaction draws
	// one uniformly.
	Workloads []string
	// Clients run concurrently, each a session with its own connection
	// (default 8).
	Clients int
	// Rate bounds the transactions started per second over all clients;
	// 0 runs as fast as the database answers.
	Rate float64
	// Duration ends the run; 0 runs until ctx is done.
	Duration time.Duration
	// Keys is the number of rows per workload (write-skew has 2*Keys,
	// lists move on to fresh rows as they grow); default 16.
	Keys int
	// Zipf is the exponent s of the hot-key distribution (row 0 hottest);
	// s <= 1 draws uniformly. Default 1.1.
	Zipf float64
	// Think pauses between a transaction's reads and its writes, drawn
	// uniformly up to twice this (default 2 ms; negative: none): the
	// window in which concurrent transactions read the same versions.
	Think time.Duration
	// DupValues is the fraction of register writes that pick a value
	// from {1, 2, 3} instead of one unique in the run, so reads often
	// cannot tell their writer (the checker's exactly-one choice). Zero
	// means the default, 0.25; negative means none: every write unique,
	// every read naming its writer, as checkers that need unique values
	// (and the time witness, which stops at a repeated value) expect.
	DupValues float64
	// TxnTimeout bounds every transaction, COMMIT included (default 2 s);
	// lock waits are bounded by half of it. A transaction that runs out
	// of time is recorded as aborted or unknown, never left open.
	TxnTimeout time.Duration
	// Schema is the PostgreSQL schema or MySQL database for the canary's
	// tables (created if missing, and then dropped at the end); empty uses
	// the DSN's default.
	Schema string
	// Prefix names the tables ("<prefix>_reg", ...) and the sessions; empty
	// picks "canary_<random>".
	Prefix string
	// Seed makes the transactions drawn repeatable (the interleaving the
	// database chooses is not); 0 picks one at random.
	Seed uint64
	// Facts records PostgreSQL's transaction id and snapshot with every
	// transaction (facts.go), for checking with the database's own
	// facts; PostgreSQL at repeatable-read or serializable only.
	Facts bool
	// Logger receives outages, arithmetic violations and unexpected
	// errors; nil discards them.
	Logger *slog.Logger

	_ struct{}
}

// Counts are the outcomes of one workload's transactions.
type Counts struct {
	Committed, Aborted, Unknown int
	// Refused counts aborts the database chose to retryably refuse
	// (serialization failures, deadlocks, lock timeouts); Errors the
	// aborts after any other error (a lost connection, ...).
	Refused, Errors int
}

// Total is the number of transactions run.
func (c Counts) Total() int { return c.Committed + c.Aborted + c.Unknown }

// Report is what a run did so far.
type Report struct {
	Dialect   Dialect
	Isolation string
	Prefix    string
	Elapsed   time.Duration
	// Workloads counts per workload name, in AllWorkloads order.
	Workloads []WorkloadCounts
	// Reconnects counts connections replaced after a failure; Outages the
	// times the database could not be reached at all, Downtime their sum.
	Reconnects, Outages int
	Downtime            time.Duration
	// Arithmetic lists violations of the workloads' invariants found
	// without the checker (a transfer audit whose sum is off, a counter
	// that lost increments): each proves the database is not
	// serializable.
	Arithmetic []string
}

// WorkloadCounts names a workload's counts.
type WorkloadCounts struct {
	Name string
	Counts
}

// Total sums every workload.
func (r Report) Total() Counts {
	var t Counts
	for _, w := range r.Workloads {
		t.Committed += w.Committed
		t.Aborted += w.Aborted
		t.Unknown += w.Unknown
		t.Refused += w.Refused
		t.Errors += w.Errors
	}
	return t
}

// Canary is one run against one database.
type Canary struct {
	cfg     Config
	rec     *record.Recorder
	tg      *target
	wls     []workload
	log     *slog.Logger
	started time.Time

	mu         sync.Mutex
	counts     map[string]*Counts
	arithmetic []string
	lastAudit  int64 // the last audit's total
	lastErrLog time.Time
	mutedErrs  int
	elapsed    time.Duration

	// stop is closed by Stop; stopOnce makes Stop idempotent.
	stop     chan struct{}
	stopOnce sync.Once
}

// Stop ends the clients as Duration elapsing would: the run still records
// its final reads and cleans up. Safe to call from any goroutine, before
// or during Run, more than once. Tests use it to end a run on what it has
// done rather than on a wall-clock budget that a slow machine may miss.
func (c *Canary) Stop() { c.stopOnce.Do(func() { close(c.stop) }) }

// New checks cfg and opens the database (failing if it cannot be reached
// now: a wrong DSN should not look like an outage). Transactions are
// recorded in rec.
func New(ctx context.Context, cfg Config, rec *record.Recorder) (*Canary, error) {
	d, dsn, err := ParseDSN(cfg.DSN)
	if err != nil {
		return nil, err
	}
	if cfg.Clients == 0 {
		cfg.Clients = 8
	}
	if cfg.Keys == 0 {
		cfg.Keys = 16
	}
	if cfg.Zipf == 0 {
		cfg.Zipf = 1.1
	}
	if cfg.Think == 0 {
		cfg.Think = 2 * time.Millisecond
	}
	if cfg.TxnTimeout == 0 {
		cfg.TxnTimeout = 2 * time.Second
	}
	switch {
	case cfg.DupValues == 0:
		cfg.DupValues = 0.25
	case cfg.DupValues < 0:
		cfg.DupValues = 0
	}
	if len(cfg.Workloads) == 0 {
		cfg.Workloads = AllWorkloads
	}
	switch {
	case cfg.Clients < 1 || cfg.Clients > 1000:
		return nil, fmt.Errorf("clients %d: want 1 to 1000", cfg.Clients)
	case cfg.Keys < 2:
		return nil, fmt.Errorf("keys %d: want at least 2", cfg.Keys)
	case cfg.Rate < 0:
		return nil, fmt.Errorf("rate %g: want 0 (unlimited) or more", cfg.Rate)
	case cfg.Duration < 0:
		return nil, fmt.Errorf("duration %s: want 0 (until interrupted) or more", cfg.Duration)
	case cfg.DupValues > 1:
		return nil, fmt.Errorf("dup values %g: want a fraction up to 1", cfg.DupValues)
	case cfg.TxnTimeout < 100*time.Millisecond:
		return nil, fmt.Errorf("txn timeout %s: want at least 100ms", cfg.TxnTimeout)
	}
	if err := checkFacts(&cfg, d); err != nil {
		return nil, err
	}
	switch cfg.SnapshotIsolation = strings.ToUpper(cfg.SnapshotIsolation); cfg.SnapshotIsolation {
	case "", "ON", "OFF":
	default:
		return nil, fmt.Errorf("snapshot isolation %q: want ON, OFF or empty", cfg.SnapshotIsolation)
	}
	if cfg.Schema != "" {
		if err := checkIdent("schema", cfg.Schema); err != nil {
			return nil, err
		}
	}
	if cfg.Prefix == "" {
		var b [4]byte
		rand.Read(b[:])
		cfg.Prefix = "canary_" + hex.EncodeToString(b[:])
	}
	if err := checkIdent("prefix", cfg.Prefix); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = mrand.Uint64()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Canary{cfg: cfg, rec: rec, log: log, counts: map[string]*Counts{}, lastAudit: int64(cfg.Keys) * initialBalance,
		stop: make(chan struct{})}
	seen := map[string]bool{}
	for _, n := range cfg.Workloads {
		if seen[n] {
			continue
		}
		seen[n] = true
		w, err := newWorkload(n, c)
		if err != nil {
			return nil, err
		}
		c.wls = append(c.wls, w)
		c.counts[n] = &Counts{}
	}
	db, err := sql.Open(d.driver(), dsn)
	if err != nil {
		return nil, fmt.Errorf("canary: open %s: %w", redact(cfg.DSN), err)
	}
	db.SetMaxIdleConns(cfg.Clients + 2)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("canary: %s at %s: %w", d, redact(cfg.DSN), err)
	}
	c.tg = &target{db: db, dialect: d, iso: cfg.Isolation, schema: cfg.Schema, prefix: cfg.Prefix, cfg: &c.cfg,
		health: &health{log: func(msg string, args ...any) { log.Warn(msg, args...) }}}
	return c, nil
}

// Prefix is the run's table and session prefix.
func (c *Canary) Prefix() string { return c.cfg.Prefix }

// Run creates the schema and tables, records a setup transaction, runs
// the clients until Duration passes or ctx is done, records a final
// transaction (the counters' arithmetic), drops what it created and
// closes the database. Database errors never stop it (C6); an error is
// returned only for a setup that fails, or a sink that fails (the history
// would have holes).
func (c *Canary) Run(ctx context.Context) (Report, error) {
	defer c.tg.db.Close()
	// Under the lock: Snapshot, safe while the run goes, reads it.
	c.mu.Lock()
	c.started = time.Now()
	c.mu.Unlock()
	dropSchema, err := c.createSchema(ctx)
	if err != nil {
		return c.Snapshot(), err
	}
	if dropSchema {
		defer func() {
			if err := c.tg.exec(ctx, c.dropSchemaSQL()); err != nil {
				c.log.Error("cleanup", "err", err)
			}
		}()
	}
	for _, w := range c.wls {
		if err := w.create(ctx, c.tg); err != nil {
			return c.Snapshot(), err
		}
		defer func() {
			if err := c.tg.exec(ctx, "DROP TABLE IF EXISTS "+c.tg.table(tableOf(w))); err != nil {
				c.log.Error("cleanup", "err", err)
			}
		}()
	}
	if err := c.setup(ctx); err != nil {
		return c.Snapshot(), err
	}

	runCtx := ctx
	if c.cfg.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, c.cfg.Duration)
		defer cancel()
	}
	var p *pacer
	if c.cfg.Rate > 0 {
		p = &pacer{interval: time.Duration(float64(time.Second) / c.cfg.Rate)}
	}
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		fatal error
	)
	clientsCtx, stopClients := context.WithCancel(runCtx)
	defer stopClients()
	go func() {
		select {
		case <-c.stop:
			stopClients()
		case <-clientsCtx.Done():
		}
	}()
	for i := 0; i < c.cfg.Clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.client(clientsCtx, i, p); err != nil {
				errMu.Lock()
				if fatal == nil {
					fatal = err
				}
				errMu.Unlock()
				stopClients()
			}
		}()
	}
	wg.Wait()
	c.mu.Lock()
	c.elapsed = time.Since(c.started)
	c.mu.Unlock()
	if fatal != nil {
		return c.Snapshot(), fatal
	}
	if err := c.final(ctx); err != nil {
		return c.Snapshot(), err
	}
	return c.Snapshot(), nil
}

func tableOf(w workload) string {
	switch w.(type) {
	case *registers:
		return tbRegisters
	case *lists:
		return tbLists
	case *counters:
		return tbCounters
	case *transfers:
		return tbAccounts
	}
	return tbWriteSkew
}

// createSchema creates Config.Schema if it does not exist yet, and says
// whether it did (then Run drops it at the end).
func (c *Canary) createSchema(ctx context.Context) (bool, error) {
	if c.cfg.Schema == "" {
		return false, nil
	}
	q := "SELECT count(*) FROM information_schema.schemata WHERE schema_name = " + c.tg.ph(1)
	var n int
	if err := c.tg.db.QueryRowContext(ctx, q, c.cfg.Schema).Scan(&n); err != nil {
		return false, fmt.Errorf("canary: look up schema %s: %w", c.cfg.Schema, err)
	}
	if n > 0 {
		return false, nil
	}
	kw := "SCHEMA"
	if c.tg.dialect == MySQL {
		kw = "DATABASE"
	}
	return true, c.tg.exec(ctx, "CREATE "+kw+" "+c.cfg.Schema)
}

func (c *Canary) dropSchemaSQL() string {
	if c.tg.dialect == MySQL {
		return "DROP DATABASE IF EXISTS " + c.cfg.Schema
	}
	return "DROP SCHEMA IF EXISTS " + c.cfg.Schema
}

// oneTxn runs fn in one recorded transaction of its own session and
// connection, which must commit. It runs even when ctx is done (the final
// read after an interrupt), bounded by ten transaction timeouts.
func (c *Canary) oneTxn(ctx context.Context, session string, fn func(x *txn) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*c.cfg.TxnTimeout)
	defer cancel()
	cl := &client{tg: c.tg, session: c.cfg.Prefix + "-" + session, rec: c.rec, rng: mrand.New(mrand.NewPCG(c.cfg.Seed, 0))}
	if err := cl.connect(ctx); err != nil {
		return fmt.Errorf("canary: %s: %w", session, err)
	}
	defer cl.c.Close()
	x, err := cl.begin(ctx)
	if err != nil {
		return fmt.Errorf("canary: %s: %w", session, err)
	}
	if err := fn(x); err != nil {
		r := x.fail(err)
		return fmt.Errorf("canary: %s: %w", session, errors.Join(err, r.err))
	}
	if r := x.commit(); r.status != history.Committed {
		return fmt.Errorf("canary: %s transaction ended %v: %v", session, r.status, r.err)
	}
	return nil
}

// setup records one transaction that writes every seeded row, so that
// every later read has a writer in the history (or reads an absent row of
// a table created empty: initial state empty).
func (c *Canary) setup(ctx context.Context) error {
	return c.oneTxn(ctx, "setup", func(x *txn) error {
		for _, w := range c.wls {
			if err := w.seed(x); err != nil {
				return err
			}
		}
		return nil
	})
}

// final records one transaction that reads every counter and audits the
// accounts, once the clients have stopped.
func (c *Canary) final(ctx context.Context) error {
	var ctr *counters
	var acct bool
	for _, w := range c.wls {
		switch w := w.(type) {
		case *counters:
			ctr = w
		case *transfers:
			acct = true
		}
	}
	if ctr == nil && !acct {
		return nil
	}
	var final map[int64]int64
	err := c.oneTxn(ctx, "final", func(x *txn) error {
		var err error
		if ctr != nil {
			if final, err = x.readAll(tbCounters); err != nil {
				return err
			}
		}
		if acct {
			bal, err := x.readAll(tbAccounts)
			if err != nil {
				return err
			}
			c.audit(bal, x.rt.ID())
		}
		return nil
	})
	if err != nil {
		// The database may be gone at the end; the history is whole
		// without the final read, only the arithmetic is missing.
		c.log.Warn("final read failed, counters not checked", "err", err)
		return nil
	}
	if ctr != nil {
		for _, v := range ctr.check(final) {
			c.violation(v)
		}
	}
	return nil
}

// audit checks a snapshot of every account.
func (c *Canary) audit(bal map[int64]int64, id string) {
	var sum int64
	for _, v := range bal {
		sum += v
	}
	want := int64(c.cfg.Keys) * initialBalance
	c.mu.Lock()
	// A sum stays off once an update is lost: report each new total once,
	// not every audit that sees the same one again.
	repeat := sum == c.lastAudit
	c.lastAudit = sum
	c.mu.Unlock()
	if (sum != want || len(bal) != c.cfg.Keys) && !repeat {
		c.violation(fmt.Sprintf("audit %s: %d accounts hold %d in total, want %d accounts holding %d", id, len(bal), sum, c.cfg.Keys, want))
	}
}

func (c *Canary) violation(s string) {
	c.mu.Lock()
	c.arithmetic = append(c.arithmetic, s)
	c.mu.Unlock()
	c.log.Warn("arithmetic: "+s, "proves", "not serializable")
}

// client runs transactions until ctx is done. It returns an error only
// when recording fails.
func (c *Canary) client(ctx context.Context, i int, p *pacer) error {
	rng := mrand.New(mrand.NewPCG(c.cfg.Seed, uint64(i)+1))
	cl := &client{tg: c.tg, session: fmt.Sprintf("%s-c%d", c.cfg.Prefix, i), rec: c.rec, rng: rng}
	kc := newKeyChooser(rng, c.cfg.Keys, c.cfg.Zipf)
	defer func() {
		if cl.c != nil {
			cl.c.Close()
		}
	}()
	for ctx.Err() == nil {
		if cl.c == nil {
			if err := cl.reconnect(ctx); err != nil {
				return nil // ctx done
			}
		}
		if err := p.wait(ctx); err != nil {
			return nil
		}
		w := c.wls[rng.IntN(len(c.wls))]
		// In-flight transactions finish when the run stops: the timeout,
		// not the stop, bounds them, so none is cut into an unknown.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.TxnTimeout)
		x, err := cl.begin(tctx)
		var r result
		if isRecordErr(err) {
			cancel()
			return err
		}
		if err != nil {
			r = result{status: history.Aborted, retryable: cl.retryable(err), err: err}
			if r.retryable {
				r.err = nil
			}
		} else {
			r = w.run(x, kc)
		}
		cancel()
		if r.err != nil && isRecordErr(r.err) {
			return r.err
		}
		c.count(w.name(), r)
		if r.err != nil || r.status == history.Unknown {
			if r.err != nil {
				c.unexpected(w.name(), r.err)
			}
			if !cl.alive(ctx) {
				discard(cl.c)
				cl.c = nil
			}
		}
	}
	return nil
}

// isRecordErr tells a sink failure (fatal: the history would have holes)
// from a database error.
func isRecordErr(err error) bool {
	var se sinkError
	return errors.As(err, &se)
}

func (c *Canary) count(name string, r result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.counts[name]
	switch r.status {
	case history.Committed:
		n.Committed++
	case history.Aborted:
		n.Aborted++
		if r.retryable {
			n.Refused++
		} else {
			n.Errors++
		}
	default:
		n.Unknown++
	}
}

// unexpected logs an error no workload expects, at most once a second.
func (c *Canary) unexpected(wl string, err error) {
	c.mu.Lock()
	if time.Since(c.lastErrLog) < time.Second {
		c.mutedErrs++
		c.mu.Unlock()
		return
	}
	muted := c.mutedErrs
	c.lastErrLog, c.mutedErrs = time.Now(), 0
	c.mu.Unlock()
	c.log.Warn("transaction failed", "workload", wl, "err", err, "more_since_last", muted)
}

// Snapshot reports what the run did so far; safe to call while it runs.
func (c *Canary) Snapshot() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Report{Dialect: c.tg.dialect, Isolation: IsolationName(c.cfg.Isolation), Prefix: c.cfg.Prefix,
		Arithmetic: append([]string(nil), c.arithmetic...)}
	r.Elapsed = c.elapsed
	if r.Elapsed == 0 && !c.started.IsZero() {
		r.Elapsed = time.Since(c.started)
	}
	for n, k := range c.counts {
		r.Workloads = append(r.Workloads, WorkloadCounts{Name: n, Counts: *k})
	}
	order := map[string]int{}
	for i, n := range AllWorkloads {
		order[n] = i
	}
	sort.Slice(r.Workloads, func(i, j int) bool { return order[r.Workloads[i].Name] < order[r.Workloads[j].Name] })
	h := c.tg.health
	h.mu.Lock()
	r.Reconnects, r.Outages, r.Downtime = h.reconnects, h.outages, h.downtime
	h.mu.Unlock()
	return r
}

// pacer spaces transaction starts over all clients; a nil pacer does not
// wait. Starts that fall behind are not made up in a burst.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return ctx.Err()
	}
	p.mu.Lock()
	now := time.Now()
	t := p.next
	if t.Before(now) {
		t = now
	}
	p.next = t.Add(p.interval)
	p.mu.Unlock()
	if d := time.Until(t); d > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return ctx.Err()
}

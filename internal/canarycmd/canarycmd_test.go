package canarycmd

// Acceptance 1 and 2 of issue #9 in short versions, against the servers of
// README.md "Testing against real parts" (skipped when unreachable, failing
// under CI=true). The 60 s / 30 s versions run with
// STREAMCHECK_CANARY_LONG=1 (TestLongAcceptance).

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/realdbtest"
)

const (
	pgDSN    = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	mysqlDSN = "mysql://root@tcp(127.0.0.1:3306)/test"
)

// reachable opens the server of a canary DSN, skipping (or, under
// CI=true, failing) when it is absent.
func reachable(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	if d, ok := strings.CutPrefix(dsn, "mysql://"); ok {
		return realdbtest.Open(t, "mysql", d)
	}
	return realdbtest.Open(t, "pgx", dsn)
}

type outcome struct {
	code   int
	alerts []alertLine
	stderr string
	hist   *history.History
}

type alertLine struct {
	ID      string   `json:"id"`
	Updated bool     `json:"updated"`
	Type    string   `json:"type"`
	Class   string   `json:"class"`
	Core    []string `json:"core"`
}

// runCanary runs the command with args plus --record, and reads back the
// alerts and the recorded history.
func runCanary(t *testing.T, ctx context.Context, args ...string) outcome {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "history.jsonl")
	var stdout, stderr bytes.Buffer
	args = append(args, "--record", rec, "--status", "0")
	code := Main(ctx, args, nil, &stdout, &stderr)
	o := outcome{code: code, stderr: stderr.String()}
	t.Logf("canary %s: exit %d\n%s", strings.Join(args, " "), code, o.stderr)
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var a alertLine
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("stdout line is not an alert: %v: %s", err, sc.Text())
		}
		o.alerts = append(o.alerts, a)
	}
	h, _, err := ingest.ReadFile(rec)
	if err != nil {
		t.Fatalf("recorded history: %v", err)
	}
	o.hist = h
	return o
}

// onlineOpts are the options the in-process check used (canary defaults).
var onlineOpts = history.Options{Level: history.StrictSerializable, Skew: int64(time.Millisecond), InDoubt: int64(time.Minute)}

func check(t *testing.T, h *history.History) *incremental.Result {
	t.Helper()
	res, err := incremental.Check(context.Background(), h, onlineOpts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// confirmCore holds an alert to the offline checker: the recorded history
// is invalid, and so are the core's transactions on their own.
func confirmCore(t *testing.T, h *history.History, a alertLine) {
	t.Helper()
	in := map[string]bool{}
	for _, id := range a.Core {
		in[id] = true
	}
	core := &history.History{}
	for _, tx := range h.Txns {
		if in[tx.ID] {
			core.Txns = append(core.Txns, tx)
		}
	}
	if len(core.Txns) != len(a.Core) {
		t.Fatalf("alert %s names %d transactions, %d of them recorded", a.ID, len(a.Core), len(core.Txns))
	}
	if res := check(t, core); res.Verdict != incremental.Invalid {
		t.Fatalf("alert %s: its core on its own is %v", a.ID, res.Verdict)
	}
	if res := check(t, h); res.Verdict != incremental.Invalid {
		t.Fatalf("alert %s: the recorded history is %v", a.ID, res.Verdict)
	}
}

// unexplained is the class of a proven core whose cycle was not drawn.
const unexplained = "cycle"

// keptPromise holds an alert's core, projected from the recorded history
// (docs/SEMANTICS.md §3), to the level the database promises: a core
// that violates it would be an anomaly the isolation forbids, that is a
// false alarm of the checker (or a database bug worth its own report).
func keptPromise(t *testing.T, h *history.History, a alertLine, promised history.Level) {
	t.Helper()
	opts := onlineOpts
	opts.Level = promised
	core := incremental.Project(h, opts, a.Core)
	if len(core.Txns) != len(a.Core) {
		t.Fatalf("alert %s names %d transactions, %d of them recorded", a.ID, len(a.Core), len(core.Txns))
	}
	res, err := incremental.Check(context.Background(), core, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Valid {
		t.Errorf("alert %s (%s): its core violates %s, which the database promises: %v", a.ID, a.Type, promised, res.Verdict)
	}
}

func statuses(h *history.History) map[history.Status]int {
	n := map[history.Status]int{}
	for _, tx := range h.Txns {
		n[tx.Status]++
	}
	return n
}

// Acceptance 1, no alert side: SERIALIZABLE on both servers, the mixed
// workload, checked strict-serializable with Δ = 1 ms.
func TestSerializableNoAlert(t *testing.T) {
	for _, tc := range []struct{ name, dsn string }{{"postgres", pgDSN}, {"mariadb", mysqlDSN}} {
		t.Run(tc.name, func(t *testing.T) {
			reachable(t, tc.dsn)
			o := runCanary(t, context.Background(), "--dsn", tc.dsn, "--isolation", "serializable", "--duration", "3s", "--clients", "6", "--keys", "6")
			if o.code != ExitOK || len(o.alerts) > 0 {
				t.Fatalf("exit %d, %d alerts at SERIALIZABLE", o.code, len(o.alerts))
			}
			// A floor low enough for a loaded CI machine: speed is measured
			// in benchmarks, not here; this only says the oracle saw work.
			if n := statuses(o.hist)[history.Committed]; n < 20 {
				t.Fatalf("only %d transactions committed", n)
			}
			if res := check(t, o.hist); res.Verdict != incremental.Valid {
				t.Fatalf("offline check of the recorded history: %v", res.Verdict)
			}
		})
	}
}

// weak is one positive control: an isolation weaker than serializable
// and the anomaly classes it allows.
type weak struct {
	name, dsn string
	args      []string
	allowed   *regexp.Regexp
	// promised is the level the isolation keeps (docs/LEVELS.md): every
	// alert's core, projected from the recorded history, must pass it on
	// its own, whatever the alert is named. That is the false-alarm
	// oracle; the names only say which shape was found.
	promised history.Level
}

// Anomalies each isolation allows. Read committed (PostgreSQL) and
// MariaDB's repeatable read without innodb_snapshot_isolation forbid only
// dirty writes and dirty reads (G0, G1a, G1b) and garbage; the cycles are
// named by their weakest Adya class, with -realtime/-process when they
// need time or session order. PostgreSQL's repeatable read is snapshot
// isolation (strong: the snapshot is taken after the client's start): it
// refuses lost updates and read skew, so only cycles with two adjacent
// anti-dependencies remain (G2-item, write skew), possibly closed through
// real-time or session order (T3 ended before T1 began, so T1 saw T3).
var weakControls = []weak{
	{"postgres-read-committed", pgDSN, []string{"--isolation", "read-committed"},
		regexp.MustCompile(`^(lost-update|read-skew|write-skew|G1c|G-single|G-nonadjacent|G2-item)(-realtime|-process)?$`), history.ReadCommitted},
	// Write skew is the only cycle PostgreSQL's repeatable read allows, and
	// the mixed workload spreads it over 16 rows of one workload in five: it
	// found none in 20 s now and then. The write-skew workload on four rows
	// meets it within seconds.
	{"postgres-repeatable-read", pgDSN, []string{"--isolation", "repeatable-read", "--workload", "write-skew", "--keys", "4"},
		regexp.MustCompile(`^(write-skew|G2-item)(-realtime|-process)?$`), history.StrongSnapshotIsolation},
	{"mariadb-repeatable-read", mysqlDSN, []string{"--isolation", "repeatable-read", "--innodb-snapshot-isolation", "off"},
		regexp.MustCompile(`^(lost-update|read-skew|write-skew|internal|G1c|G-single|G-nonadjacent|G2-item)(-realtime|-process)?$`), history.ReadCommitted},
}

func runWeak(t *testing.T, w weak, budget time.Duration) {
	reachable(t, w.dsn)
	args := append([]string{"--dsn", w.dsn, "--duration", budget.String(), "--stop-on-alert"}, w.args...)
	start := time.Now()
	o := runCanary(t, context.Background(), args...)
	if o.code != ExitAnomaly || len(o.alerts) == 0 {
		t.Fatalf("exit %d with %d alerts within %s, want an alert", o.code, len(o.alerts), budget)
	}
	t.Logf("%d alerts, run took %s", len(o.alerts), time.Since(start).Round(time.Millisecond))
	for _, a := range o.alerts {
		if a.Updated {
			continue
		}
		keptPromise(t, o.hist, a, w.promised)
		if a.Class == unexplained {
			// The explanation's case analysis went deeper than it prints
			// (incremental/describe.go): the core is proven but carries no
			// class to hold to the list; keptPromise above is the check.
			t.Logf("alert %s is unexplained (%s); its core passes %s", a.ID, a.Type, w.promised)
			continue
		}
		if !w.allowed.MatchString(a.Type) && !w.allowed.MatchString(a.Class) {
			t.Errorf("alert %s is %s (%s), which %s does not allow", a.ID, a.Type, a.Class, w.name)
		}
	}
	confirmCore(t, o.hist, o.alerts[0])
	if !strings.Contains(o.stderr, "first alert") {
		t.Errorf("summary does not time the first alert")
	}
}

// Acceptance 1, alert side, short: each weaker isolation raises an alert
// of a kind it allows, whose core the offline checker confirms on the
// recorded history.
func TestWeakIsolationAlerts(t *testing.T) {
	for _, w := range weakControls {
		t.Run(w.name, func(t *testing.T) { runWeak(t, w, 20*time.Second) })
	}
}

// Acceptance 1 at full length (60 s without alert, an alert within 30 s):
//
//	STREAMCHECK_CANARY_LONG=1 go test -run TestLongAcceptance -v -timeout 20m ./internal/canarycmd/
func TestLongAcceptance(t *testing.T) {
	if os.Getenv("STREAMCHECK_CANARY_LONG") == "" {
		t.Skip("set STREAMCHECK_CANARY_LONG=1 for the 60 s / 30 s acceptance runs")
	}
	for _, tc := range []struct{ name, dsn string }{{"postgres", pgDSN}, {"mariadb", mysqlDSN}} {
		t.Run(tc.name+"-serializable", func(t *testing.T) {
			reachable(t, tc.dsn)
			o := runCanary(t, context.Background(), "--dsn", tc.dsn, "--isolation", "serializable", "--duration", "60s")
			if o.code != ExitOK || len(o.alerts) > 0 {
				t.Fatalf("exit %d, %d alerts at SERIALIZABLE", o.code, len(o.alerts))
			}
			if res := check(t, o.hist); res.Verdict != incremental.Valid {
				t.Fatalf("offline check of the recorded history: %v", res.Verdict)
			}
		})
	}
	for _, w := range weakControls {
		t.Run(w.name, func(t *testing.T) { runWeak(t, w, 30*time.Second) })
	}
}

// Acceptance 2: backends are killed (pg_terminate_backend) while they sit
// in COMMIT (a deferred constraint trigger sleeps there): those
// transactions are recorded unknown, no false alarm follows, and the
// canary goes on.
func TestKilledDuringCommit(t *testing.T) {
	db := reachable(t, pgDSN)
	prefix := fmt.Sprintf("sc_kill_%d", time.Now().UnixNano()%1e9)
	fn := prefix + "_slow"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Cleanup(func() { db.Exec("DROP FUNCTION IF EXISTS " + fn + "() CASCADE") })
	if _, err := db.Exec("CREATE FUNCTION " + fn + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$"); err != nil {
		t.Fatal(err)
	}
	killed := make(chan int, 1)
	go func() {
		n := 0
		defer func() { killed <- n }()
		// Once the canary's counter table exists, every COMMIT of an
		// increment sleeps 50 ms in the trigger; kill whoever sleeps.
		for ctx.Err() == nil {
			_, err := db.ExecContext(ctx, "CREATE CONSTRAINT TRIGGER "+prefix+"_t AFTER UPDATE ON "+prefix+"_ctr DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "+fn+"()")
			if err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var k int
			err := db.QueryRowContext(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'PgSleep'", prefix).Scan(&k)
			if err == nil {
				n += k
			}
		}
	}()
	o := runCanary(t, ctx, "--dsn", pgDSN, "--isolation", "serializable", "--duration", "4s", "--prefix", prefix, "--clients", "4", "--keys", "4", "-v")
	cancel()
	n := <-killed
	st := statuses(o.hist)
	t.Logf("%d backends killed in COMMIT; recorded %v", n, st)
	if o.code != ExitOK || len(o.alerts) > 0 {
		t.Fatalf("false alarm: exit %d, %d alerts", o.code, len(o.alerts))
	}
	if n == 0 || st[history.Unknown] == 0 {
		t.Fatalf("%d kills, %d unknown outcomes: the fault never hit a COMMIT", n, st[history.Unknown])
	}
	// Each unknown one was recorded unknown, not guessed: at most one per
	// kill (a kill outside COMMIT aborts a statement instead).
	if st[history.Unknown] > n {
		t.Fatalf("%d unknown outcomes for %d kills", st[history.Unknown], n)
	}
	// The canary went on: transactions committed after the first unknown.
	var firstUnknown int64 = 1 << 62
	for _, tx := range o.hist.Txns {
		if tx.Status == history.Unknown && tx.End < firstUnknown {
			firstUnknown = tx.End
		}
	}
	after := 0
	for _, tx := range o.hist.Txns {
		if tx.Status == history.Committed && tx.Start > firstUnknown {
			after++
		}
	}
	if after == 0 {
		t.Fatalf("no transaction committed after the first kill")
	}
	if m := regexp.MustCompile(`(\d+) reconnects?`).FindStringSubmatch(o.stderr); m == nil || m[1] == "0" {
		t.Fatalf("summary reports no reconnect: %q", m)
	}
	if res := check(t, o.hist); res.Verdict != incremental.Valid {
		t.Fatalf("offline check with unknown outcomes: %v", res.Verdict)
	}
}

// proxy forwards loopback TCP connections to a server and can take the
// server away: down closes every open connection and refuses new ones
// (accepted, then closed at once) until up.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[net.Conn]bool
	down  bool
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(c, s)
		go pipe(s, c)
	}
}

func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// Acceptance 2 through a proxy, and the outage path: MariaDB's
// connections are cut mid-transaction and the server stays unreachable
// for a while; the canary reports the outage, reconnects with backoff,
// raises no false alarm and goes on.
func TestDatabaseGoesAway(t *testing.T) {
	reachable(t, mysqlDSN)
	p := newProxy(t, "127.0.0.1:3306")
	dsn := "mysql://root@tcp(" + p.ln.Addr().String() + ")/test"
	var cutAt time.Time
	go func() {
		time.Sleep(1500 * time.Millisecond)
		cutAt = time.Now()
		p.setDown(true)
		time.Sleep(1200 * time.Millisecond)
		p.setDown(false)
	}()
	o := runCanary(t, context.Background(), "--dsn", dsn, "--isolation", "serializable", "--duration", "5s", "--clients", "4", "--keys", "6")
	if o.code != ExitOK || len(o.alerts) > 0 {
		t.Fatalf("exit %d, %d alerts after an outage", o.code, len(o.alerts))
	}
	for _, want := range []string{"database unreachable, retrying with backoff", "database reachable again", "database unreachable 1 time,"} {
		if !strings.Contains(o.stderr, want) {
			t.Errorf("stderr does not report %q", want)
		}
	}
	after := 0
	for _, tx := range o.hist.Txns {
		if tx.Status == history.Committed && tx.Start > cutAt.Add(1200*time.Millisecond).UnixNano() {
			after++
		}
	}
	if after == 0 {
		t.Fatalf("no transaction committed after the outage")
	}
	t.Logf("recorded %v, %d committed after the outage", statuses(o.hist), after)
	if res := check(t, o.hist); res.Verdict != incremental.Valid {
		t.Fatalf("offline check: %v", res.Verdict)
	}
}

// --kafka-brokers: every recorded transaction is produced once, keyed by
// its session, and a session's events come out of their partition in
// session order (what run's window needs). The broker is kfake in
// process; the consumer is franz-go's kgo, a client other than the
// producer's kafka-go.
func TestKafkaOutput(t *testing.T) {
	reachable(t, pgDSN)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "txns"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := runCanary(t, context.Background(), "--dsn", pgDSN, "--duration", "2s", "--clients", "4",
		"--kafka-brokers", strings.Join(c.ListenAddrs(), ","), "--kafka-topic", "txns")
	if o.code != ExitOK {
		t.Fatalf("exit %d", o.code)
	}
	want := map[string]history.Txn{}
	for _, tx := range o.hist.Txns {
		want[tx.ID] = tx
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("txns"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The bound is generous because a loaded box (the full suite beside
	// other builds) can take many seconds to hand over what was produced;
	// the test is about completeness and order, not speed.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var dec ingest.NativeDecoder
	last := map[string]int64{} // session -> last start seen
	got := 0
	for got < len(want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d events: %v", got, len(want), ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			got++
			tx, err := dec.Decode(r.Value, history.Pos{Source: "kafka", Line: int(r.Offset)})
			if err != nil {
				t.Fatalf("partition %d offset %d: %v", r.Partition, r.Offset, err)
			}
			if string(r.Key) != tx.Session {
				t.Errorf("event %s of session %s has key %q", tx.ID, tx.Session, r.Key)
			}
			if w, ok := want[tx.ID]; !ok || w.Start != tx.Start || w.Status != tx.Status {
				t.Errorf("event %s differs from the recorded one", tx.ID)
			}
			if tx.Start < last[tx.Session] {
				t.Errorf("session %s out of order at %s", tx.Session, tx.ID)
			}
			last[tx.Session] = tx.Start
		})
	}
	// A handful of events from several sessions is enough to see keys and
	// order; asking for 100 in two seconds failed on a loaded box.
	if got != len(want) || got < 20 {
		t.Fatalf("%d events consumed, %d recorded", got, len(want))
	}
}

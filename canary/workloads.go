package canary

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

// The workload names Config.Workloads takes.
const (
	Registers = "registers"
	Lists     = "lists"
	Counters  = "counters"
	Transfers = "transfers"
	WriteSkew = "write-skew"
)

// AllWorkloads is the mixed workload, in the order reports list them.
var AllWorkloads = []string{Registers, Lists, Counters, Transfers, WriteSkew}

// Table suffixes; they are also the prefixes of the history keys.
const (
	tbRegisters = "reg"
	tbLists     = "list"
	tbCounters  = "ctr"
	tbAccounts  = "acct"
	tbWriteSkew = "ws"
)

// initialBalance is every account's balance after setup.
const initialBalance = 100

// workload is one transaction shape family. run draws and runs one
// transaction on x and returns its result; workloads that check
// arithmetic learn the result through done.
type workload interface {
	name() string
	create(ctx context.Context, tg *target) error
	// seed adds the workload's initial rows to the recorded setup
	// transaction.
	seed(x *txn) error
	run(x *txn, kc *keyChooser) result
}

func newWorkload(name string, c *Canary) (workload, error) {
	switch name {
	case Registers:
		return &registers{}, nil
	case Lists:
		return &lists{c: c}, nil
	case Counters:
		return &counters{c: c}, nil
	case Transfers:
		return &transfers{c: c}, nil
	case WriteSkew:
		return &writeSkew{}, nil
	}
	return nil, fmt.Errorf("unknown workload %q (want %v or mixed)", name, AllWorkloads)
}

// keyChooser draws row numbers in [0, n) with Zipf-distributed heat (row
// 0 hottest), or uniformly when s <= 1.
type keyChooser struct {
	rng *rand.Rand
	z   *rand.Zipf
	n   int
}

func newKeyChooser(rng *rand.Rand, n int, s float64) *keyChooser {
	kc := &keyChooser{rng: rng, n: n}
	if s > 1 && n > 1 {
		kc.z = rand.NewZipf(rng, s, 1, uint64(n-1))
	}
	return kc
}

func (kc *keyChooser) key() int64 {
	if kc.z != nil {
		return int64(kc.z.Uint64())
	}
	return int64(kc.rng.IntN(kc.n))
}

// two draws two different rows.
func (kc *keyChooser) two() (int64, int64) {
	a := kc.key()
	for {
		if b := kc.key(); b != a || kc.n < 2 {
			return a, b
		}
		if kc.z != nil && kc.rng.IntN(4) == 0 {
			// Zipf may keep drawing the hot row; fall back to uniform.
			if b := int64(kc.rng.IntN(kc.n)); b != a {
				return a, b
			}
		}
	}
}

// think pauses between a transaction's reads and its writes, uniformly
// up to twice Config.Think: the window in which another transaction can
// read the same versions, which is what every anomaly here needs.
func (x *txn) think(rng *rand.Rand) {
	if d := x.cl.tg.cfg.Think; d > 0 {
		time.Sleep(time.Duration(rng.Int64N(int64(2 * d))))
	}
}

// registers: read-modify-write, blind writes, read-only (one statement
// per key, so read committed shows read skew) and reads-then-write, over
// rows that start absent; a fraction of the writes (Config.DupValues, a
// quarter by default) pick a value from {1, 2, 3}, so reads often cannot
// tell their writer (the checker's exactly-one choice), the rest a value
// unique in the run.
type registers struct{}

func (*registers) name() string { return Registers }
func (*registers) create(ctx context.Context, tg *target) error {
	return tg.createTable(ctx, tbRegisters, "BIGINT")
}
func (*registers) seed(*txn) error { return nil }

func (*registers) run(x *txn, kc *keyChooser) result {
	rng := kc.rng
	value := func() int64 {
		if rng.Float64() < x.cl.tg.cfg.DupValues {
			return int64(1 + rng.IntN(3))
		}
		return x.cl.tg.next()
	}
	var plan []struct {
		write bool
		k     int64
	}
	add := func(write bool, k int64) {
		plan = append(plan, struct {
			write bool
			k     int64
		}{write, k})
	}
	switch rng.IntN(4) {
	case 0:
		k := kc.key()
		add(false, k)
		add(true, k)
	case 1:
		for i := 0; i < 1+rng.IntN(3); i++ {
			add(true, kc.key())
		}
	case 2:
		for i := 0; i < 2+rng.IntN(2); i++ {
			add(false, kc.key())
		}
	default:
		a, b := kc.two()
		add(false, a)
		add(false, b)
		add(true, []int64{a, b}[rng.IntN(2)])
	}
	read := false
	for _, s := range plan {
		var err error
		if s.write {
			if read {
				x.think(rng)
				read = false
			}
			err = x.upsert(tbRegisters, s.k, value())
		} else {
			_, err = x.readInt(tbRegisters, s.k)
			read = true
		}
		if err != nil {
			return x.fail(err)
		}
	}
	return x.commit()
}

// listEpoch: every so many transactions of the list workload its rows
// move on to fresh keys, so list reads stay short however long the
// canary runs.
const listEpoch = 500

// lists: appends of unique elements to comma-separated text rows and
// reads of whole lists, over rows that start absent (the empty list).
type lists struct {
	c  *Canary
	mu sync.Mutex
	n  int64
}

func (*lists) name() string { return Lists }
func (*lists) create(ctx context.Context, tg *target) error {
	return tg.createTable(ctx, tbLists, "TEXT")
}
func (*lists) seed(*txn) error { return nil }

func (l *lists) run(x *txn, kc *keyChooser) result {
	l.mu.Lock()
	base := l.n / listEpoch * int64(kc.n)
	l.n++
	l.mu.Unlock()
	rng := kc.rng
	a, b := kc.two()
	a, b = a+base, b+base
	var err error
	switch rng.IntN(4) {
	case 0: // two appends
		if err = x.appendElem(tbLists, a, x.cl.tg.next()); err == nil {
			err = x.appendElem(tbLists, b, x.cl.tg.next())
		}
	case 1: // two reads
		if err = x.readList(tbLists, a); err == nil {
			err = x.readList(tbLists, b)
		}
	case 2: // read one, append to the other
		if err = x.readList(tbLists, a); err == nil {
			x.think(rng)
			err = x.appendElem(tbLists, b, x.cl.tg.next())
		}
	default: // append, then read back
		if err = x.appendElem(tbLists, a, x.cl.tg.next()); err == nil {
			err = x.readList(tbLists, a)
		}
	}
	if err != nil {
		return x.fail(err)
	}
	return x.commit()
}

// counters: SELECT v, then UPDATE ... SET v = <v+1 computed by the
// client>, so that a database that loses updates writes the same value
// twice. The arithmetic at the end: a counter's final value must lie
// between its committed increments and those plus the unknown ones.
type counters struct {
	c         *Canary
	mu        sync.Mutex
	committed map[int64]int64
	unknown   map[int64]int64
}

func (*counters) name() string { return Counters }
func (*counters) create(ctx context.Context, tg *target) error {
	return tg.createTable(ctx, tbCounters, "BIGINT")
}

func (w *counters) seed(x *txn) error {
	w.committed, w.unknown = map[int64]int64{}, map[int64]int64{}
	for k := 0; k < x.cl.tg.cfg.Keys; k++ {
		if err := x.upsert(tbCounters, int64(k), 0); err != nil {
			return err
		}
	}
	return nil
}

func (w *counters) run(x *txn, kc *keyChooser) result {
	k := kc.key()
	v, err := x.readInt(tbCounters, k)
	if err == nil && !v.Valid {
		err = fmt.Errorf("canary: counter row %d missing", k)
	}
	if err == nil {
		x.think(kc.rng)
		err = x.update(tbCounters, k, v.Int64+1)
	}
	if err != nil {
		return x.fail(err)
	}
	r := x.commit()
	w.mu.Lock()
	switch r.status {
	case history.Committed:
		w.committed[k]++
	case history.Unknown:
		w.unknown[k]++
	}
	w.mu.Unlock()
	return r
}

// check compares the final values with the increments.
func (w *counters) check(final map[int64]int64) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for k, v := range final {
		lo, hi := w.committed[k], w.committed[k]+w.unknown[k]
		if v < lo || v > hi {
			out = append(out, fmt.Sprintf("counter %s ends at %d after %d committed and %d unknown increments (%d lost)",
				key(tbCounters, k), v, lo, w.unknown[k], lo-v))
		}
	}
	return out
}

// transfers: move 1..5 between two accounts, each balance read and the
// new one computed by the client (an overdraft commits the reads only);
// one transaction in ten audits every balance in one statement, whose sum
// must always be Keys*100 (committed or not, a transfer keeps it).
type transfers struct{ c *Canary }

func (*transfers) name() string { return Transfers }
func (*transfers) create(ctx context.Context, tg *target) error {
	return tg.createTable(ctx, tbAccounts, "BIGINT")
}

func (*transfers) seed(x *txn) error {
	for k := 0; k < x.cl.tg.cfg.Keys; k++ {
		if err := x.upsert(tbAccounts, int64(k), initialBalance); err != nil {
			return err
		}
	}
	return nil
}

func (w *transfers) run(x *txn, kc *keyChooser) result {
	if kc.rng.IntN(10) == 0 {
		bal, err := x.readAll(tbAccounts)
		if err != nil {
			return x.fail(err)
		}
		w.c.audit(bal, x.rt.ID())
		return x.commit()
	}
	from, to := kc.two()
	amount := int64(1 + kc.rng.IntN(5))
	a, err := x.readInt(tbAccounts, from)
	if err != nil {
		return x.fail(err)
	}
	b, err := x.readInt(tbAccounts, to)
	if err != nil {
		return x.fail(err)
	}
	if a.Int64 >= amount {
		x.think(kc.rng)
		if err := x.update(tbAccounts, from, a.Int64-amount); err != nil {
			return x.fail(err)
		}
		if err := x.update(tbAccounts, to, b.Int64+amount); err != nil {
			return x.fail(err)
		}
	}
	return x.commit()
}

// writeSkew: rows come in pairs (2p, 2p+1); a transaction reads both and
// overwrites one of them, so two concurrent ones on a pair that write
// different rows form the write-skew cycle that snapshot isolation
// allows.
type writeSkew struct{}

func (*writeSkew) name() string { return WriteSkew }
func (*writeSkew) create(ctx context.Context, tg *target) error {
	return tg.createTable(ctx, tbWriteSkew, "BIGINT")
}

func (*writeSkew) seed(x *txn) error {
	for k := 0; k < 2*x.cl.tg.cfg.Keys; k++ {
		if err := x.upsert(tbWriteSkew, int64(k), x.cl.tg.next()); err != nil {
			return err
		}
	}
	return nil
}

func (*writeSkew) run(x *txn, kc *keyChooser) result {
	p := kc.key()
	for _, k := range []int64{2 * p, 2*p + 1} {
		if _, err := x.readInt(tbWriteSkew, k); err != nil {
			return x.fail(err)
		}
	}
	x.think(kc.rng)
	if err := x.update(tbWriteSkew, 2*p+int64(kc.rng.IntN(2)), x.cl.tg.next()); err != nil {
		return x.fail(err)
	}
	return x.commit()
}

package dbworkload

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/record"
)

// RegisterConfig shapes the register workload.
type RegisterConfig struct {
	// Clients run concurrently, each on its own connection and session.
	Clients int
	// Txns is the number of transactions each client attempts (aborted
	// ones count; they are not retried).
	Txns int
	// Keys is the number of rows; few keys, much contention.
	Keys int
	// MaxOps bounds the micro-operations per transaction (at least 2).
	MaxOps int
	// Seed makes the choice of transactions repeatable (the database's
	// interleaving is not).
	Seed uint64

	_ struct{}
}

// Register runs the register workload on a fresh table kv(k, v) with Keys
// rows, initially absent. Every client runs Txns transactions drawn from
// read-modify-write (read k, write k), blind writes (one to three keys),
// read-only (two or three keys) and mixed (reads of some keys, then a
// write of another), at tg.Isolation; each write is an upsert of a value
// unique in the run, so every read names its writer. Every transaction is
// recorded in rec under session "<prefix>-reg-c<i>". Serialization
// failures and deadlocks are recorded as aborted and counted; any other
// error stops the workload.
func Register(ctx context.Context, tg *Target, cfg RegisterConfig, rec *record.Recorder) (Report, error) {
	if cfg.Clients < 1 || cfg.Txns < 0 || cfg.Keys < 1 {
		return Report{}, fmt.Errorf("dbworkload: register: bad config %+v", cfg)
	}
	if cfg.MaxOps < 2 {
		cfg.MaxOps = 2
	}
	if cfg.Clients >= 2000 || cfg.Txns*cfg.MaxOps >= 1_000_000 {
		// Values are client*1e6+n, and must fit a 32-bit INT column.
		return Report{}, fmt.Errorf("dbworkload: register: too many clients or writes for unique INT values")
	}
	tb, err := tg.createTable(ctx, "reg")
	if err != nil {
		return Report{}, err
	}
	defer tb.drop(ctx)
	return runClients(ctx, cfg.Clients, func(ctx context.Context, client int) (Report, error) {
		return registerClient(ctx, tg, tb, cfg, rec, client)
	})
}

func registerClient(ctx context.Context, tg *Target, tb *table, cfg RegisterConfig, rec *record.Recorder, client int) (Report, error) {
	var rep Report
	c, err := tg.conn(ctx, rec, fmt.Sprintf("%s-reg-c%d", tg.prefix(), client))
	if err != nil {
		return rep, err
	}
	defer c.close()
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(client)))
	next := int64(client+1) * 1_000_000
	for n := 0; n < cfg.Txns; n++ {
		plan := planRegister(rng, cfg)
		st, retry, err := runPlan(ctx, c, tb, plan, &next)
		if err != nil {
			return rep, err
		}
		rep.add(st, retry)
	}
	return rep, nil
}

// step is one planned micro-operation.
type step struct {
	write bool
	key   int64
}

func planRegister(rng *rand.Rand, cfg RegisterConfig) []step {
	key := func() int64 { return int64(rng.IntN(cfg.Keys)) }
	nOps := 2 + rng.IntN(cfg.MaxOps-1)
	var plan []step
	switch rng.IntN(4) {
	case 0: // read-modify-write, possibly of several keys
		for len(plan)+2 <= nOps {
			k := key()
			plan = append(plan, step{key: k}, step{write: true, key: k})
		}
	case 1: // blind writes
		for i := 0; i < min(nOps, 3); i++ {
			plan = append(plan, step{write: true, key: key()})
		}
	case 2: // read-only
		for i := 0; i < min(nOps, 3); i++ {
			plan = append(plan, step{key: key()})
		}
	default: // reads of some keys, then writes of others
		for i := 0; i < nOps-1; i++ {
			plan = append(plan, step{key: key()})
		}
		plan = append(plan, step{write: true, key: key()})
	}
	return plan
}

// runPlan runs one transaction; it returns its recorded status, whether an
// abort was retryable, and an error only for failures the workload does
// not expect.
func runPlan(ctx context.Context, c *conn, tb *table, plan []step, next *int64) (history.Status, bool, error) {
	x, err := c.begin(ctx)
	if err != nil {
		return history.Aborted, c.retryable(err), retryOrErr(c, err)
	}
	for _, s := range plan {
		if s.write {
			*next++
			err = x.upsert(ctx, tb, s.key, *next)
		} else {
			_, err = x.read(ctx, tb, s.key)
		}
		if err != nil {
			return x.fail(err)
		}
	}
	return x.commit()
}

func retryOrErr(c *conn, err error) error {
	if c.retryable(err) {
		return nil
	}
	return err
}

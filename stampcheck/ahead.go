package stampcheck

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// Ahead feeds a Compact on a goroutine of its own, so that a scan's
// decoding and the compact form's recording run on two processors
// (docs/SEMANTICS.md §10 "The compact form fed on a second goroutine").
// Add copies what AddIDs reads of a transaction (its head, id, ops' kinds
// and list lengths, and the ids) into a batch; a full batch goes to the
// goroutine, which hands each transaction to the Compact in the order
// Add received them, exactly as AddIDs would have been called. So the
// Compact ends the same as if fed directly: same refusal, same form.
// Close waits for it; until then the Compact is the goroutine's alone.
//
// The one thing that lags is the refusal's news: Refused turns true
// some batches after the transaction that caused it (the caller stops
// feeding a little later than it could), and AddIDs ignores everything
// after a refusal anyway.
type Ahead struct {
	c       *Compact
	cur     *aheadBatch
	full    chan *aheadBatch
	free    chan *aheadBatch
	done    chan struct{}
	refused atomic.Bool
	batch   int // transactions a batch holds (aheadTxns; tests use fewer)
}

// aheadBatch holds up to aheadTxns transactions back to back.
type aheadBatch struct {
	txns                    []aheadTxn
	ids                     []byte
	fops                    []fop
	keyIDs, valIDs, listIDs []int32
}

// aheadTxn is one transaction of a batch: its head and facts, and where
// its id, ops (fops, keyIDs and valIDs alike) and list ids end in the
// batch's arenas (each starts where the previous one's ends).
type aheadTxn struct {
	head                  txnHead
	facts                 history.Facts
	idEnd, opEnd, listEnd int
}

const (
	aheadTxns    = 1024
	aheadBatches = 4 // in flight at most: memory stays a few batches
)

// Ahead starts c's goroutine. c must not be used but through the Ahead
// until Close returns.
func (c *Compact) Ahead() *Ahead { return c.ahead(aheadTxns) }

func (c *Compact) ahead(batch int) *Ahead {
	a := &Ahead{c: c, batch: batch, full: make(chan *aheadBatch, aheadBatches), free: make(chan *aheadBatch, aheadBatches), done: make(chan struct{})}
	for range aheadBatches - 1 {
		a.free <- &aheadBatch{}
	}
	a.cur = &aheadBatch{}
	go a.run()
	return a
}

// Add is c.AddIDs(t, f, keyIDs, valIDs, listIDs), done on c's goroutine;
// it copies what it needs (t's ops and ids may be a decoder's scratch;
// t.Session is the caller's to keep, as ingest.ScanNative gives it).
func (a *Ahead) Add(t *history.Txn, f history.Facts, keyIDs, valIDs, listIDs []int32) {
	b := a.cur
	b.ids = append(b.ids, t.ID...)
	b.fops = flatOps(b.fops, t.Ops)
	b.keyIDs = append(b.keyIDs, keyIDs[:len(t.Ops)]...)
	b.valIDs = append(b.valIDs, valIDs[:len(t.Ops)]...)
	// The list ids the ops name: valIDs of a list read are offsets in
	// listIDs, kept as they are (run hands add this transaction's own).
	nl := 0
	for i := range t.Ops {
		if op := &t.Ops[i]; op.IsList {
			nl = max(nl, int(valIDs[i])+int(min(len(op.List), math.MaxInt32)))
		}
	}
	b.listIDs = append(b.listIDs, listIDs[:min(nl, len(listIDs))]...)
	b.txns = append(b.txns, aheadTxn{head: headOf(t), facts: f, idEnd: len(b.ids), opEnd: len(b.fops), listEnd: len(b.listIDs)})
	if len(b.txns) == a.batch {
		a.flush()
	}
}

func (a *Ahead) flush() {
	a.full <- a.cur
	a.cur = <-a.free
}

// Refused reports whether the Compact has refused (Why) as far as its
// goroutine has read; false may be stale, true is final.
func (a *Ahead) Refused() bool { return a.refused.Load() }

// Close hands on the last batch and waits until the Compact has every
// transaction Add received; the Compact is the caller's again.
func (a *Ahead) Close() {
	if a.full == nil {
		return
	}
	a.full <- a.cur
	close(a.full)
	<-a.done
	a.full, a.cur = nil, nil
}

func (a *Ahead) run() {
	defer close(a.done)
	c := a.c
	for b := range a.full {
		var id, op, list int
		for k := range b.txns {
			t := &b.txns[k]
			if c.not == "" {
				// The id's bytes are the batch's, reused once the
				// batch is read: add copies them (idSet.add) and keeps
				// no string.
				ids := b.ids[id:t.idEnd]
				c.add(t.head, unsafe.String(unsafe.SliceData(ids), len(ids)), t.facts, b.fops[op:t.opEnd], b.keyIDs[op:t.opEnd], b.valIDs[op:t.opEnd], b.listIDs[list:t.listEnd])
			}
			id, op, list = t.idEnd, t.opEnd, t.listEnd
		}
		if c.not != "" {
			a.refused.Store(true)
		}
		b.txns, b.ids, b.fops = b.txns[:0], b.ids[:0], b.fops[:0]
		b.keyIDs, b.valIDs, b.listIDs = b.keyIDs[:0], b.valIDs[:0], b.listIDs[:0]
		select {
		case a.free <- b:
		default: // the last batch, or one too many: dropped
		}
	}
}

package runcmd

import (
	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/sionline"
	"github.com/streamcheck/streamcheck/weakonline"
)

// runEngine is what the loop reads of its engine besides the driver's
// calls: statistics, alert bodies, the checkpoint's snapshot and the body
// file. *online.Online (the serializable levels) has it all; the weak
// levels' engine (weakonline) goes through weakEngine, which has no body
// file.
type runEngine interface {
	driver.Engine
	Stats() online.OnlineStats
	AlertTxn(a *online.Alert, name string) *history.Txn
	SnapshotDurable() ([]byte, func() error, error)
	Punch() func() error
	BodyFileSize() int64
	SpillError() error
	SetRetention(online.Retention)
	SetStream(string)
}

var _ runEngine = (*online.Online)(nil)

// weakEngine adapts weakonline.Engine: it keeps its transactions in its
// snapshot (closed bodies at read atomic and causal in a temporary body
// file, read back into it), so there is no durable body file to size or
// punch, and no retention to apply; a failed write of its body file is
// its SpillError.
type weakEngine struct{ *weakonline.Engine }

func (weakEngine) Punch() func() error           { return func() error { return nil } }
func (weakEngine) BodyFileSize() int64           { return 0 }
func (weakEngine) SetRetention(online.Retention) {}

// siEngine adapts sionline.Engine (the snapshot-isolation family): its
// evicted bodies are in the body file (its archive, punched up to the
// first byte a segment still names), the window in its snapshot.
type siEngine struct{ *sionline.Engine }

func (e siEngine) SpillError() error           { return e.ArchiveError() }
func (siEngine) SetRetention(online.Retention) {}

// undecided reports whether e's last check could not decide (the weak and
// snapshot engines; the serializable engine says so through its stats).
func undecided(e runEngine) bool {
	switch e := e.(type) {
	case weakEngine:
		return e.Undecided()
	case siEngine:
		return e.Undecided()
	case stampEngine:
		if u, ok := e.Inner().(interface{ Undecided() bool }); ok {
			return u.Undecided()
		}
	}
	return false
}

// checkedAs names what run checks when lv is promised.
func checkedAs(lv history.Level) string {
	if weakonline.Levels(lv) {
		return weakonline.CheckedAs(lv)
	}
	if sionline.Levels(lv) {
		return sionline.CheckedAs(lv)
	}
	return incremental.OnlineLevel.String()
}

package sionline

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// serialTaken counts the serial witnesses the tests' screens took (each
// one replayed by the oracle, TestMain).
var serialTaken atomic.Int64

// TestMain replays every serial witness a screen takes, in every test of
// the package, against the oracle's rules (internal/oracle.ReplayWitness:
// its own replay, sharing nothing with the sweep): a witness the sweep
// gets wrong fails the test that produced it. STREAMCHECK_SIONLINE_SERIAL=off
// turns the sweep off, so the same tests run on the search alone;
// =unchecked skips the replay (profiles of BenchmarkRMW).
func TestMain(m *testing.M) {
	serialCheck = func(h *history.History, opts history.Options, w []string) {
		serialTaken.Add(1)
		if err := oracle.ReplayWitness(h, opts, w); err != nil {
			panic("sionline: a serial witness the oracle rejects: " + err.Error())
		}
	}
	switch os.Getenv("STREAMCHECK_SIONLINE_SERIAL") {
	case "off":
		NoSerialWitness = true
	case "unchecked":
		serialCheck = nil // BenchmarkRMW's profiles: the engine's time alone
	}
	os.Exit(m.Run())
}

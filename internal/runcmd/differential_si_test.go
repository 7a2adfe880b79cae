package runcmd

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/sionline"
)

// siInjections are the anomalies issue 28 names (lost update, read skew,
// G1) and a write skew, which the family allows: a stream with one must
// not alert for it.
var siInjections = []string{history.LostUpdate, history.ReadSkew, history.G1a, history.G1b, history.G1c, history.WriteSkew}

// TestOnlineMatchesCheckSI is issue 28's differential test: at each level
// of the snapshot-isolation family, streams of every shape of issue 22's
// table (diffShapes), with and without injected anomalies, half of them
// with the shapes the level allows and stronger levels forbid (gen's
// ValidAt), arrive in a random order within the lateness and are stepped
// with a random tick (the batch one step takes). The first verdict equals
// check's at the level run checks (sionline.Checked), every alert's core
// is invalid there on its own and minimal, an alert without
// needs_realtime violates the promised level on its own, and every
// injected anomaly check finds is alerted. The acceptance run is 1,000
// streams per level:
//
//	STREAMCHECK_ONLINE_SI=1000 go test ./internal/runcmd -run TestOnlineMatchesCheckSI -timeout 12h
//
// (STREAMCHECK_ONLINE_SI_LEVEL=<name> runs one level; streams cycle
// through the shapes. docs/SEMANTICS.md §5 "What a step no longer
// redoes" runs the four levels side by side, one process each.)
func TestOnlineMatchesCheckSI(t *testing.T) {
	count := 3
	if raceEnabled || testing.Short() {
		count = 1
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_ONLINE_SI")); err == nil && n > 0 {
		count = n
	}
	only := os.Getenv("STREAMCHECK_ONLINE_SI_LEVEL")
	for _, d := range history.Levels() {
		lv := d.Level
		if !sionline.Levels(lv) || (only != "" && d.Name != only) {
			continue
		}
		for i := 0; i < count; i++ {
			sh := diffShapes[i%len(diffShapes)]
			rng := rand.New(rand.NewPCG(uint64(i), uint64(28+int(lv))))
			var from []string
			if i%2 == 1 {
				from = siInjections
			}
			validAt := ""
			if i%4 >= 2 {
				validAt = d.Name
			}
			h, inj, init, cfg := shapeStream(t, sh, rng, uint64(100_000*int(lv)+i+1), from, validAt)
			name := fmt.Sprintf("%s/%s/%d/%d-txns/inject=%v/valid-at=%t", d.Name, sh.name, i, len(h.Txns), cfg.Inject, cfg.ValidAt != "")
			t.Run(name, func(t *testing.T) { onlineVsOfflineAt(t, rng, h, inj, init, lv, sionline.Checked(lv), sh.indoubt) })
		}
	}
}

package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

// TestOnlineMatchesCheck is issue #5's differential test: generated
// histories (realistic overlap, duplicates, blind writes, unknown outcomes),
// with and without injected anomalies, arrive in a random order within the
// lateness and are checked with a random tick. The first verdict (any
// alert) equals check's; every alert's core violates on its own and is
// minimal (each one-transaction deletion passes); every injected anomaly is
// alerted. STREAMCHECK_ONLINE_COUNT=1000 is the acceptance run.
func TestOnlineMatchesCheck(t *testing.T) {
	count := 20
	if raceEnabled {
		count = 4
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_ONLINE_COUNT")); err == nil && n > 0 {
		count = n
	}
	presets := gen.PresetNames()
	types := gen.InjectTypes()
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		cfg, _ := gen.Preset(presets[i%len(presets)])
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 100 + rng.IntN(300)
		cfg.Keys = 10 + rng.IntN(100)
		cfg.Sessions = 8
		cfg.Concurrency = 6
		cfg.UnknownRatio = 0.02
		cfg.DupValueRatio = 0.1
		if i%2 == 0 {
			for k := 0; k < 1+rng.IntN(3); k++ {
				cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
			}
		}
		h, inj, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%d/%s/%d-txns/inject=%v", i, presets[i%len(presets)], len(h.Txns), cfg.Inject)
		t.Run(name, func(t *testing.T) { onlineVsOffline(t, rng, h, inj) })
	}
}

func onlineVsOffline(t *testing.T, rng *rand.Rand, h *history.History, inj []gen.Injected) {
	const indoubt = int64(5_000_000) // 5 ms
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = indoubt
	// Arrival: each event is emitted at its end plus a random producer
	// delay; the lateness covers the longest transaction plus that delay.
	delay := int64(2_000_000)
	var maxDur int64
	type arrival struct {
		at int64
		i  int
	}
	arr := make([]arrival, len(h.Txns))
	for i := range h.Txns {
		tx := &h.Txns[i]
		maxDur = max(maxDur, tx.End-tx.Start)
		arr[i] = arrival{tx.End + rng.Int64N(delay), i}
	}
	sort.Slice(arr, func(a, b int) bool { return arr[a].at < arr[b].at })
	var in bytes.Buffer
	shuffled := &history.History{}
	for _, a := range arr {
		shuffled.Txns = append(shuffled.Txns, h.Txns[a.i])
	}
	in.WriteString(native(t, shuffled))
	lateness := maxDur + delay + 1
	tick := 1 + rng.Int64N(3_000_000) // up to 3 ms of event time
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--http=",
		"--lateness", strconv.FormatInt(lateness, 10), "--indoubt", strconv.FormatInt(indoubt, 10),
		"--initial-state", "empty", "--tick", strconv.FormatInt(tick, 10), "--status", "0",
	}, &in, &out, &errb)
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errb.String(), "PARTIAL") {
		t.Fatalf("events were dead-lettered within the lateness: %s", errb.String())
	}
	if (code == ExitAnomaly) != (res.Verdict == incremental.Invalid) || code == ExitError {
		t.Fatalf("run exit %d, check %s\nstderr: %s\nalerts: %s", code, res.Verdict, errb.String(), out.String())
	}
	latest := map[string][]string{}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var a report.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("alert %q: %v", l, err)
		}
		if _, seen := latest[a.ID]; !seen {
			ids = append(ids, a.ID)
		}
		latest[a.ID] = a.Core
	}
	for _, id := range ids {
		core := latest[id]
		if r := check(t, h, opts, core); r != incremental.Invalid {
			t.Errorf("alert %s core %v: its projection is %s", id, core, r)
		}
		for j := range core {
			rest := append(append([]string(nil), core[:j]...), core[j+1:]...)
			if r := check(t, h, opts, rest); r != incremental.Valid {
				t.Errorf("alert %s core %v is not minimal: without %s it is %s", id, core, core[j], r)
			}
		}
	}
	for _, in := range inj {
		found := false
		for _, c := range latest {
			found = found || isSubsetOf(c, in.Txns)
		}
		if !found {
			t.Errorf("injected %s %v not alerted; alerts %v", in.Type, in.Txns, latest)
		}
	}
}

func check(t *testing.T, h *history.History, opts history.Options, ids []string) incremental.Verdict {
	t.Helper()
	r, err := incremental.Check(context.Background(), incremental.Project(h, opts, ids), opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Verdict
}

func isSubsetOf(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return len(a) > 0
}

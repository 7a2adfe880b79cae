package runcmd

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestMainTxnsMatchesStdin is the oracle for the in-process way in
// (MainTxns, the canary's): the same transactions handed over decoded
// give byte for byte the alert lines, dead letters and exit status that
// Main gives on their native JSON lines on stdin. Arrival is shuffled
// beyond the lateness for some histories, so late events are
// dead-lettered and their dead letters (which carry the event's text)
// are compared too.
func TestMainTxnsMatchesStdin(t *testing.T) {
	count := 12
	if raceEnabled {
		count = 4
	}
	presets := gen.PresetNames()
	types := gen.InjectTypes()
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 21))
		cfg, _ := gen.Preset(presets[i%len(presets)])
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 100 + rng.IntN(200)
		cfg.Keys = 10 + rng.IntN(50)
		cfg.Sessions = 6
		cfg.Concurrency = 4
		cfg.UnknownRatio = 0.02
		if i%2 == 0 {
			cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Arrival at the end plus a delay; with a short lateness (odd i)
		// some events are late.
		delay := int64(2_000_000)
		type arrival struct {
			at int64
			i  int
		}
		arr := make([]arrival, len(h.Txns))
		var maxDur int64
		for j := range h.Txns {
			maxDur = max(maxDur, h.Txns[j].End-h.Txns[j].Start)
			arr[j] = arrival{h.Txns[j].End + rng.Int64N(delay), j}
		}
		sort.Slice(arr, func(a, b int) bool { return arr[a].at < arr[b].at })
		shuffled := &history.History{}
		for _, a := range arr {
			shuffled.Txns = append(shuffled.Txns, h.Txns[a.i])
		}
		lateness := maxDur + delay + 1
		if i%2 == 1 {
			lateness = maxDur / 4
		}
		args := []string{"--http=", "--status", "0", "--initial-state", "empty",
			"--lateness", strconv.FormatInt(lateness, 10), "--indoubt", "5000000",
			"--tick", strconv.FormatInt(1+rng.Int64N(3_000_000), 10)}
		t.Run(fmt.Sprintf("%d/%s/late=%v", i, presets[i%len(presets)], i%2 == 1), func(t *testing.T) {
			dir := t.TempDir()
			viaJSON, viaTxns := filepath.Join(dir, "json.dead"), filepath.Join(dir, "txns.dead")
			var out1, err1 bytes.Buffer
			code1 := Main(context.Background(), append(args, "--dead-letter", viaJSON),
				bytes.NewBufferString(native(t, shuffled)), &out1, &err1)

			ch := make(chan history.Txn)
			go func() {
				defer close(ch)
				for _, tx := range shuffled.Txns {
					ch <- tx
				}
			}()
			var out2, err2 bytes.Buffer
			code2 := MainTxns(context.Background(), append(args, "--dead-letter", viaTxns), ch, &out2, &err2)

			if code1 != code2 {
				t.Fatalf("exit %d on JSON lines, %d on transactions\nstderr (JSON):\n%s\nstderr (txns):\n%s", code1, code2, err1.String(), err2.String())
			}
			if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
				t.Fatalf("alerts differ\nJSON lines:\n%s\ntransactions:\n%s", out1.String(), out2.String())
			}
			d1, _ := os.ReadFile(viaJSON)
			d2, _ := os.ReadFile(viaTxns)
			if !bytes.Equal(d1, d2) {
				t.Fatalf("dead letters differ\nJSON lines:\n%s\ntransactions:\n%s", d1, d2)
			}
			t.Logf("exit %d, %d alert bytes, %d dead-letter bytes", code1, out1.Len(), len(d1))
		})
	}
}

// TestMainTxnsNeedsStdinSource: decoded transactions stand for stdin only;
// another source is a usage error, not a silent read of it.
func TestMainTxnsNeedsStdinSource(t *testing.T) {
	ch := make(chan history.Txn)
	close(ch)
	var out, errb bytes.Buffer
	if code := MainTxns(context.Background(), []string{"--http=", "--source", "kafka"}, ch, &out, &errb); code != ExitError {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitError, errb.String())
	}
}

package checkcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestCompactPathReport runs check on the same stamped histories as a
// file (the compact path first, stamps.go) and on standard input (the
// full path only), at each serializable level and in both output formats:
// the exit status and the report are byte for byte the same. The
// histories: generated with stamps (witnessed), with injected anomalies
// (some transactions unstamped, the full path decides), with a stamp
// dropped, with two reads changed (contradictions or anomalies), and with
// a duplicate id (an input error).
func TestCompactPathReport(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var viaCompact, checks int
	n := 12
	if testing.Short() {
		n = 4
	}
	for i := range n {
		cfg := gen.Config{Txns: 40 + rng.IntN(60), Keys: 10 + rng.IntN(20), Seed: uint64(i + 1), Sessions: 4, AbortRatio: 0.05, ListRatio: 0.2}
		if i%4 == 1 {
			cfg.InjectRate, cfg.UnknownRatio = 0.05, 0.02
		}
		h, _, err := gen.GenerateStamps(cfg)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 4 {
		case 2:
			for j := range h.Txns {
				if h.Txns[j].Status == history.Committed && rng.IntN(2) == 0 {
					for n := range h.Txns[j].Ops {
						if h.Txns[j].Ops[n].Kind == history.Read && !h.Txns[j].Ops[n].IsList {
							h.Txns[j].Ops[n].Value = history.Value(fmt.Sprint(rng.IntN(2)))
						}
					}
					break
				}
			}
		case 3:
			if i == 3 {
				h.Txns[len(h.Txns)-1].ID = h.Txns[0].ID
			} else {
				h.Facts[rng.IntN(len(h.Facts))].Has &^= history.HasCommitTS
			}
		}
		text := ingest.AppendNativeHistory(nil, h)
		file := filepath.Join(dir, fmt.Sprintf("h%d.jsonl", i))
		if err := os.WriteFile(file, text, 0o644); err != nil {
			t.Fatal(err)
		}
		hits, n := fileAgainstStdin(t, i, file, text, "", "by the stamps' witness")
		viaCompact, checks = viaCompact+hits, checks+n
	}
	if viaCompact == 0 {
		t.Fatal("no history took the compact path")
	}
	t.Logf("%d of %d checks answered by the compact path", viaCompact, checks)
}

// fileAgainstStdin checks history i as a file (the compact paths first)
// and as standard input (the full path only) at each serializable level
// in both output formats, and fails unless the exit status and the report
// (and, given a witness directory, the witness files) are the same. It
// returns how many of the checks printed marker on the file's progress
// lines (the compact path answered) and how many it made.
func fileAgainstStdin(t *testing.T, i int, file string, text []byte, witnessDir, marker string) (hits, checks int) {
	t.Helper()
	for _, lv := range []string{"serializable", "strong-session-serializable", "strict-serializable"} {
		for _, format := range []string{"text", "json"} {
			var out1, err1, out2, err2 bytes.Buffer
			args1 := []string{"--level", lv, "--format", format, "--progress"}
			args2 := slices.Clone(args1)
			var w1, w2 string
			if witnessDir != "" {
				w1, w2 = filepath.Join(witnessDir, "w1"), filepath.Join(witnessDir, "w2")
				os.Remove(w1)
				os.Remove(w2)
				args1 = append(args1, "--witness", w1)
				args2 = append(args2, "--witness", w2)
			}
			args1, args2 = append(args1, file), append(args2, "-")
			code1 := Main(args1, nil, nil, &out1, &err1)
			code2 := Main(args2, nil, bytes.NewReader(text), &out2, &err2)
			// Positions name the file on one path and "-" on the other,
			// and so do the witness files.
			got := bytes.ReplaceAll(out1.Bytes(), []byte(file), []byte("-"))
			if witnessDir != "" {
				got = bytes.ReplaceAll(got, []byte(w1), []byte(w2))
			}
			if code1 != code2 || !bytes.Equal(untimed(t, format, got), untimed(t, format, out2.Bytes())) {
				t.Fatalf("history %d at %s (%s): file exit %d, stdin exit %d\nfile:\n%s%s\nstdin:\n%s%s", i, lv, format, code1, code2, out1.String(), err1.String(), out2.String(), err2.String())
			}
			if witnessDir != "" {
				wf1, e1 := os.ReadFile(w1)
				wf2, e2 := os.ReadFile(w2)
				if (e1 == nil) != (e2 == nil) || !bytes.Equal(wf1, wf2) {
					t.Fatalf("history %d at %s: witness files differ (%v, %v)\n%s\n%s", i, lv, e1, e2, wf1, wf2)
				}
			}
			checks++
			if bytes.Contains(err1.Bytes(), []byte(marker)) {
				hits++
			}
		}
	}
	return hits, checks
}

// untimed is a report without its durations (the search's, which differ
// from run to run).
func untimed(t *testing.T, format string, out []byte) []byte {
	if format != "json" || len(out) == 0 { // text, or an input error's empty report
		return out
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if st, ok := m["stats"].(map[string]any); ok {
		for _, k := range []string{"encode_ns", "solve_ns", "core_ns"} {
			delete(st, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

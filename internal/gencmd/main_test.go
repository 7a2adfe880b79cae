package gencmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/checkcmd"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return o.String(), e.String(), code
}

// Every flag reaches its knob, on top of the preset.
func TestFlagsSetKnobs(t *testing.T) {
	cfg, o, err := parse(strings.Fields(
		"--workload blindw-rh --txns 7 --sessions 5 --keys 9 --ops 3 --read-ratio 0.3 "+
			"--blind-write-ratio 0.4 --dup-ratio 0.05 --unknown-ratio 0.06 --abort-ratio 0.07 "+
			"--list-ratio 0.08 --concurrency 2.5 --key-dist zipf --zipf-s 1.5 --latency 2ms "+
			"--stale-gap 1s --max-list-len 11 --start 12 --inject lost-update,write-skew --inject-rate 0.01 "+
			"--seed 13 -o out.jsonl --manifest m.json"), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := gen.Preset("blindw-rh")
	want.Txns, want.Sessions, want.Keys, want.OpsPerTxn = 7, 5, 9, 3
	want.ReadRatio, want.BlindWriteRatio, want.DupValueRatio = 0.3, 0.4, 0.05
	want.UnknownRatio, want.AbortRatio, want.ListRatio = 0.06, 0.07, 0.08
	want.Concurrency, want.KeyDist, want.ZipfS = 2.5, gen.Zipf, 1.5
	want.Latency, want.StaleGap, want.MaxListLen, want.StartTime = 2e6, 1e9, 11, 12
	want.Inject, want.InjectRate, want.Seed = []string{"lost-update", "write-skew"}, 0.01, 13
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config\n got %+v\nwant %+v", cfg, want)
	}
	if o.out != "out.jsonl" || o.manifest != "m.json" {
		t.Errorf("options %+v", o)
	}
	// Unset flags keep the preset's values.
	cfg, _, _ = parse([]string{"--workload", "mixed", "--keys", "10"}, &bytes.Buffer{})
	want, _ = gen.Preset("mixed")
	want.Keys = 10
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
}

// The output decodes with ingest's reader into exactly the generator's
// history, and the same flags give the same bytes.
func TestOutputRoundTrips(t *testing.T) {
	args := []string{"--txns", "500", "--seed", "3", "--inject", "G1c,stale-read,incompatible-order"}
	out, errOut, code := runMain(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	h, format, err := ingest.ReadHistory(strings.NewReader(out), "gen")
	if err != nil || format != ingest.FormatNative {
		t.Fatalf("read back: %v (%v)", err, format)
	}
	cfg, _, _ := parse(args, &bytes.Buffer{})
	want, inj, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Txns {
		h.Txns[i].Pos = history.Pos{}
	}
	if len(h.Txns) != len(want.Txns) {
		t.Fatalf("read %d txns, generated %d", len(h.Txns), len(want.Txns))
	}
	for i := range h.Txns {
		a, b := h.Txns[i], want.Txns[i]
		if a.Compact() != b.Compact() || a.Start != b.Start || a.End != b.End {
			t.Fatalf("txn %d:\n read %s\n  gen %s", i, a.Compact(), b.Compact())
		}
	}
	var manifest []gen.Injected
	if err := json.Unmarshal([]byte(errOut), &manifest); err != nil {
		t.Fatalf("manifest on stderr: %v: %q", err, errOut)
	}
	if !reflect.DeepEqual(manifest, inj) || len(manifest) != 3 || manifest[1].Type != gen.StaleRead {
		t.Errorf("manifest %+v, want %+v", manifest, inj)
	}
	again, _, _ := runMain(t, args...)
	if again != out {
		t.Error("same flags, different bytes")
	}
}

func TestFilesAndQuietStderr(t *testing.T) {
	dir := t.TempDir()
	hist, man := filepath.Join(dir, "h.jsonl"), filepath.Join(dir, "m.json")
	out, errOut, code := runMain(t, "--workload", "blindw-rw", "--txns", "100", "-o", hist, "--manifest", man, "--inject", "G0")
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err := os.ReadFile(hist)
	if err != nil || bytes.Count(data, []byte("\n")) != 103 {
		t.Fatalf("history file: %v, %d lines", err, bytes.Count(data, []byte("\n")))
	}
	var manifest []gen.Injected
	if b, err := os.ReadFile(man); err != nil || json.Unmarshal(b, &manifest) != nil || len(manifest) != 1 || manifest[0].Type != history.G0 {
		t.Fatalf("manifest %v %+v", err, manifest)
	}
	// Without injections stderr stays empty.
	if _, errOut, code := runMain(t, "--txns", "10"); code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--workload", "nope"},
		{"--inject", "G9"},
		{"--read-ratio", "2"},
		{"--sessions", "2", "--concurrency", "5"},
		{"--key-dist", "pareto"},
		{"--bogus"},
		{"extra"},
	} {
		_, errOut, code := runMain(t, args...)
		if code != 2 || !strings.Contains(errOut, "gen") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if _, _, code := runMain(t, "-o", filepath.Join(t.TempDir(), "no", "such", "dir")); code != 1 {
		t.Errorf("unwritable output: exit %d", code)
	}
	// Help asked for goes to stdout, as every command's does.
	if out, errOut, code := runMain(t, "--help"); code != 0 || !strings.Contains(out, "-inject") || errOut != "" {
		t.Errorf("help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Fewer sessions than the preset's concurrency allows: the default
	// concurrency shrinks instead of failing.
	if _, errOut, code := runMain(t, "--sessions", "3", "--txns", "10"); code != 0 {
		t.Errorf("--sessions 3: exit %d %s", code, errOut)
	}
}

// The manifest names each injected anomaly with the class `check` reports
// for it on the generated history: a user comparing the two sees the same
// words. Differential, per injected type and a few seeds and workloads,
// through both commands' real entry points.
func TestManifestClassIsChecksClass(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range gen.InjectTypes() {
		for _, w := range []string{"mixed", "blindw-rw"} {
			for _, seed := range []string{"1", "2"} {
				name := typ + "/" + w + "/" + seed
				hist, man := filepath.Join(dir, "h.jsonl"), filepath.Join(dir, "m.json")
				if _, e, code := runMain(t, "--workload", w, "--txns", "300", "--seed", seed, "--inject", typ, "-o", hist, "--manifest", man); code != 0 {
					t.Fatalf("%s: gen exit %d: %s", name, code, e)
				}
				var inj []gen.Injected
				b, err := os.ReadFile(man)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &inj); err != nil || len(inj) != 1 {
					t.Fatalf("%s: manifest %s: %v", name, b, err)
				}
				if inj[0].Class == "" {
					t.Errorf("%s: manifest entry has no class: %s", name, b)
				}
				var out, errb bytes.Buffer
				code := checkcmd.Main([]string{"--level", "strict-serializable", "--format", "json", hist}, nil, nil, &out, &errb)
				if code != checkcmd.ExitAnomaly {
					t.Fatalf("%s: check exit %d: %s", name, code, errb.String())
				}
				var r report.Report
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				found := false
				for _, a := range r.Anomalies {
					if slices.Equal(sorted(a.Core), sorted(inj[0].Txns)) {
						found = true
						if a.Class != inj[0].Class {
							t.Errorf("%s: manifest class %q, check's class %q (type %q)", name, inj[0].Class, a.Class, a.Type)
						}
					}
				}
				if !found {
					t.Errorf("%s: check reports no anomaly with the core %v", name, inj[0].Txns)
				}
			}
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

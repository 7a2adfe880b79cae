package checkcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/internal/report"
)

func TestParseNS(t *testing.T) {
	for _, c := range []struct {
		in   string
		none bool
		want int64
		ok   bool
	}{
		{"0", false, 0, true},
		{"1500", false, 1500, true},
		{"1ms", false, 1_000_000, true},
		{"2.5s", false, 2_500_000_000, true},
		{"10ns", false, 10, true},
		{" 7 ", false, 7, true},
		{"-1", false, 0, false},
		{"-1ms", false, 0, false},
		{"soon", false, 0, false},
		{"none", false, 0, false},
		{"none", true, history.NoInDoubt, true},
		{"inf", true, history.NoInDoubt, true},
		{"∞", true, history.NoInDoubt, true},
		{"3us", true, 3000, true},
		{"9223372036854775807", false, 1<<63 - 1, true},
		{"9223372036854775808", false, 0, false},
	} {
		got, err := parseNS(c.in, c.none)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseNS(%q, %v) = %d, %v; want %d ok=%v", c.in, c.none, got, err, c.want, c.ok)
		}
	}
}

// TestParseFlagsAnywhere: flags before and after FILE mean the same.
func TestParseFlagsAnywhere(t *testing.T) {
	want := config{
		file:         "h.jsonl",
		opts:         history.Options{Level: history.StrictSerializable, Skew: 1000, InDoubt: 5_000_000_000, InitialState: history.InitialUnknown},
		maxAnomalies: 3, timeout: time.Second, format: "json", dotDir: "d", witness: "w", progress: true,
	}
	flags := []string{"--level", "strict-serializable", "--skew", "1us", "--indoubt", "5s", "--initial-state", "unknown",
		"--max-anomalies", "3", "--timeout", "1s", "--format", "json", "--dot", "d", "--witness", "w", "--progress"}
	for split := 0; split <= len(flags); split += 2 {
		args := append(append(append([]string{}, flags[:split]...), "h.jsonl"), flags[split:]...)
		got, err := parse(args, io.Discard, io.Discard, nil, false)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if got != want {
			t.Fatalf("%v:\n got %+v\nwant %+v", args, got, want)
		}
	}
	got, err := parse([]string{"-"}, io.Discard, io.Discard, nil, true)
	if err != nil || got.file != "-" || !got.progress || got.opts != history.DefaultOptions() || got.maxAnomalies != 10 || got.format != "text" {
		t.Fatalf("defaults: %+v, %v", got, err)
	}
}

func TestExamples(t *testing.T) {
	fsys := fstest.MapFS{
		"b.jsonl": {Data: []byte(`{"id":"t","session":"s","status":"committed","ops":[["w","x",1]]}` + "\n")},
		"a.edn":   {Data: []byte("")},
		"sub/c":   {Data: []byte("")},
	}
	if got := strings.Join(ExampleNames(fsys), ","); got != "a,b" {
		t.Fatalf("names %s", got)
	}
	for _, bad := range []string{"", "c", "sub/c", "*", "../b"} {
		if p := examplePath(fsys, bad); p != "" {
			t.Errorf("examplePath(%q) = %q", bad, p)
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"example:b"}, fsys, nil, &out, &errb); code != ExitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "VALID: serializable") {
		t.Fatal(out.String())
	}
	if code := Main([]string{"example:zzz"}, fsys, nil, &out, &errb); code != ExitError || !strings.Contains(errb.String(), "have example:a, example:b") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// TestProgress: --progress writes a few lines on stderr and none after the
// report; without it stderr stays empty.
func TestProgress(t *testing.T) {
	h := "{\"id\":\"t\",\"session\":\"s\",\"status\":\"committed\",\"ops\":[[\"w\",\"x\",1]]}\n"
	var out, errb bytes.Buffer
	if code := Main([]string{"--progress", "-"}, nil, strings.NewReader(h), &out, &errb); code != ExitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	// The history has no timestamps: the witness is the session
	// level's (sessionFirst), and the line must name that level, not the
	// real-time one.
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "streamcheck: reading -") || !strings.Contains(lines[1], "read 1 transaction (native)") || !strings.Contains(lines[2], "encoded") ||
		!strings.HasSuffix(lines[3], "the witness satisfies strong-session-serializable, which implies serializable") {
		t.Fatalf("progress:\n%s", errb.String())
	}
	errb.Reset()
	Main([]string{"-"}, nil, strings.NewReader(h), &out, &errb)
	if errb.Len() != 0 {
		t.Fatalf("stderr without --progress: %s", errb.String())
	}
}

// TestOverrun: a checker that ignores its context is abandoned a grace
// period after the --timeout (C4), and the verdict is unknown.
func TestOverrun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := func(context.Context, *history.History, history.Options, incremental.Config) (*incremental.Result, error) {
		<-release
		return nil, errors.New("too late")
	}
	h := "{\"id\":\"t\",\"session\":\"s\",\"status\":\"committed\",\"ops\":[[\"w\",\"x\",1]]}\n"
	var out, errb bytes.Buffer
	start := time.Now()
	code := mainWith(context.Background(), stuck, []string{"--timeout", "10ms", "--format", "json", "-"}, nil, strings.NewReader(h), &out, &errb)
	took := time.Since(start)
	if code != ExitUnknown || !strings.Contains(out.String(), `"valid": null`) || !strings.Contains(errb.String(), "did not stop") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if g := graceFor(10 * time.Millisecond); took < g || took > g+5*time.Second {
		t.Fatalf("gave up after %s, want about %s", took, g)
	}
	// A cancelled context (an interrupt) is abandoned the same way.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	if code := mainWith(ctx, stuck, []string{"-"}, nil, strings.NewReader(h), &out, &errb); code != ExitUnknown || !strings.HasPrefix(out.String(), "UNKNOWN: ") {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
}

// TestAgainstOracle runs the whole command (flags, decoding, check,
// report) on random tiny histories written as native JSON Lines, with
// random options, and compares its verdict with the brute-force oracle
// under the same options: a flag that does not reach the checker, or a
// report that misstates the verdict, shows up as a disagreement. Every
// reported core must be a core by the oracle, and every witness file a
// serial order the oracle's replay accepts.
func TestAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	cfg := oracle.DefaultTinyConfig()
	levels := []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable}
	n := 300
	if testing.Short() {
		n = 60
	}
	var invalid, valid int
	for i := 0; i < n; i++ {
		h := oracle.RandomTiny(rng, cfg)
		file := filepath.Join(dir, fmt.Sprintf("h%d.jsonl", i))
		var b []byte
		for k := range h.Txns {
			b = ingest.AppendNative(b, &h.Txns[k])
			b = append(b, '\n')
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = levels[rng.IntN(len(levels))]
		args := []string{"--format", "json", "--level", opts.Level.String()}
		if rng.IntN(2) == 0 {
			opts.Skew = int64(rng.IntN(15))
			args = append(args, "--skew", fmt.Sprint(opts.Skew))
		}
		if rng.IntN(2) == 0 {
			opts.InDoubt = int64(rng.IntN(40))
			args = append(args, "--indoubt", fmt.Sprintf("%dns", opts.InDoubt))
		}
		if rng.IntN(4) == 0 {
			opts.InitialState = history.InitialUnknown
			args = append(args, "--initial-state", "unknown")
		}
		witness := filepath.Join(dir, fmt.Sprintf("w%d.txt", i))
		args = append(args, "--witness", witness, file)

		// The oracle reads the history as the command does, from the file.
		hf, _, err := ingest.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := oracle.Check(hf, opts)
		if err != nil {
			t.Fatalf("oracle: %v", err)
		}
		var out, errb bytes.Buffer
		code := Main(args, nil, nil, &out, &errb)
		var r report.Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, out.String(), errb.String())
		}
		if r.Level != opts.Level.String() || r.SkewNS != opts.Skew || (r.InDoubtNS == nil) != (opts.InDoubt < 0) || r.InitialState != opts.InitialState.String() {
			t.Fatalf("%v: report states other options: %+v", args, r)
		}
		switch {
		case want && code == ExitValid:
			valid++
			order := strings.Fields(readFile(t, witness))
			if err := oracle.ReplayWitness(hf, opts, order); err != nil {
				t.Fatalf("%v: witness %v: %v", args, order, err)
			}
		case !want && code == ExitAnomaly:
			invalid++
			if len(r.Anomalies) == 0 {
				t.Fatalf("%v: invalid without anomalies", args)
			}
			for _, a := range r.Anomalies {
				if err := oracle.CheckCore(hf, opts, a.Core); err != nil {
					t.Fatalf("%v: core %v: %v", args, a.Core, err)
				}
			}
		default:
			t.Fatalf("%v: exit %d, oracle says valid=%v\n%s\n%s", args, code, want, b, errb.String())
		}
	}
	t.Logf("%d valid, %d invalid histories agree with the oracle", valid, invalid)
	if valid < n/10 || invalid < n/10 {
		t.Errorf("weak sample: %d valid, %d invalid", valid, invalid)
	}
}

// TestInjected checks a generated history with every anomaly type the
// generator injects, under strict serializability. Every reported core
// must be a core by the oracle (CheckCore brute-forces only the core's
// projection, so it scales), and every injected core must intersect a
// reported one: the checker claims that the history minus the reported
// cores satisfies the level, and an injected core left whole would
// contradict that.
func TestInjected(t *testing.T) {
	cfg, err := gen.Preset("mixed")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Seed = 600, 3
	cfg.Inject = gen.InjectTypes()
	h, injected, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "h.jsonl")
	var b []byte
	for k := range h.Txns {
		b = ingest.AppendNative(b, &h.Txns[k])
		b = append(b, '\n')
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"--format", "json", "--level", "strict-serializable", "--max-anomalies", "100", file}, nil, nil, &out, &errb)
	var r report.Report
	if err := json.Unmarshal(out.Bytes(), &r); code != ExitAnomaly || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, errb.String())
	}
	if len(r.Anomalies) >= 100 || r.Stats.TimedOut {
		t.Fatalf("%d anomalies, timed out %v: the search did not finish", len(r.Anomalies), r.Stats.TimedOut)
	}
	hf, _, err := ingest.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	reported := map[string]bool{}
	for _, a := range r.Anomalies {
		if err := oracle.CheckCore(hf, opts, a.Core); err != nil {
			t.Errorf("%s core %v: %v", a.Type, a.Core, err)
		}
		for _, id := range a.Core {
			reported[id] = true
		}
	}
	for _, inj := range injected {
		hit := false
		for _, id := range inj.Txns {
			hit = hit || reported[id]
		}
		if !hit {
			t.Errorf("injected %s %v intersects no reported core", inj.Type, inj.Txns)
		}
	}
	t.Logf("%d injected, %d reported anomalies", len(injected), len(r.Anomalies))
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNoTransactions: an input with no transaction to check is an input
// error (exit 2, "no transactions"), not a vacuously valid history, in
// every format and for every way of being empty.
func TestNoTransactions(t *testing.T) {
	for name, in := range map[string]string{
		"empty":          "",
		"blank lines":    "\n  \n\t\n",
		"elle edn empty": "[]",
		"elle json":      "[]\n",
		"elle nemesis":   `{:type :info, :f :start, :process :nemesis, :time 1}` + "\n",
		"gzip of empty":  "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x01\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00",
	} {
		var out, errb strings.Builder
		code := Main([]string{"-"}, nil, strings.NewReader(in), &out, &errb)
		if code != ExitError || !strings.Contains(errb.String(), "no transactions") {
			t.Errorf("%s: exit %d, stderr %q; want %d and \"no transactions\"", name, code, errb.String(), ExitError)
		}
		if strings.Contains(out.String(), "VALID") {
			t.Errorf("%s: a verdict on stdout: %q", name, out.String())
		}
	}
}

package runcmd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/internal/checkcmd"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

// The bad-input corpus: every file of testdata/badinput at the repository
// root, one validation rule (of the native, Elle EDN and Elle JSON
// decoders, of history validation, or of run's window) per file, with
// what both commands must say about it written in one place,
// testdata/badinput/expect.txt:
//
//	NAME  EXIT  REJECTED  ANOMALIES  [REST]
//
// EXIT is the exit status both commands give; REJECTED the lines run sets
// aside as input errors ("-" none, "*" every non-blank line: a history in
// a format run does not read, e.g. Elle's), comma-separated; ANOMALIES
// the anomalies both find, each as its core's ids joined by "+", cores
// comma-separated ("-" none). On an input error check reports no verdict,
// so its anomalies are those on the lines run accepted; REST, when given,
// says they differ from run's, e.g. where a rejected line wrote a value a
// later line reads: check on the rest sees a garbage read, while run does
// not alert on a read that only the rejected event could explain (issue
// 20 item 1). run's anomalies must then be among REST's (an alert holds
// whatever the rejected events contained, so also without them). Lines
// starting with # are comments. Files
// that other work adds (deadletter-*, utf8-*, future-*) need their line
// there too: the test fails on a file without one, and on a line without
// a file.
const badInputDir = "../../testdata/badinput"

// badInputOpts are the options both commands check with: the level run
// checks (strict-serializable), run's in-doubt horizon, and an empty
// initial state so that the expected anomalies are easy to state. run's
// lateness is an hour and its tick 1ns, so that no event of a small file
// is late: lateness is a property of the stream, not of the bytes, and a
// late event rightly makes run's check partial where check's is not.
var (
	badInputCheckArgs = []string{"--level", "strict-serializable", "--indoubt", "1m", "--initial-state", "empty", "--format", "json", "--max-anomalies", "100", "-"}
	badInputRunArgs   = []string{"--http=", "--status", "0", "--lateness", "1h", "--tick", "1", "--indoubt", "1m", "--initial-state", "empty"}
)

type badInputExpect struct {
	exit      int
	rejected  string // "-", "*" or sorted line numbers, comma-separated
	anomalies string // "-" or sorted cores, comma-separated
	rest      string // check's on the accepted lines; "" = anomalies
}

func readBadInputExpect(t *testing.T) map[string]badInputExpect {
	t.Helper()
	f, err := os.Open(filepath.Join(badInputDir, "expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]badInputExpect{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 && len(fields) != 5 {
			t.Fatalf("expect.txt:%d: want NAME EXIT REJECTED ANOMALIES [REST], got %q", n, line)
		}
		code, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("expect.txt:%d: exit %q: %v", n, fields[1], err)
		}
		if _, dup := want[fields[0]]; dup {
			t.Fatalf("expect.txt:%d: %s given twice", n, fields[0])
		}
		e := badInputExpect{exit: code, rejected: fields[2], anomalies: canonCores(fields[3])}
		if len(fields) == 5 {
			e.rest = canonCores(fields[4])
		}
		want[fields[0]] = e
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// canonCores sorts the ids in each core and the cores, so that a spelling
// in expect.txt compares with what the commands print.
func canonCores(s string) string {
	if s == "-" || s == "" {
		return "-"
	}
	var cores []string
	for c := range strings.SplitSeq(s, ",") {
		ids := strings.Split(c, "+")
		slices.Sort(ids)
		cores = append(cores, strings.Join(ids, "+"))
	}
	slices.Sort(cores)
	return strings.Join(cores, ",")
}

func coreSet(cores [][]string) string {
	var parts []string
	for _, c := range cores {
		parts = append(parts, strings.Join(c, "+"))
	}
	return canonCores(strings.Join(parts, ","))
}

// TestBadInputCorpus is the differential over the corpus: fed through
// standard input, run and check give the same exit status, the one
// expect.txt states, and find the same anomalies. Where the input has an
// input error, check reports it and no verdict while run sets the line
// aside and checks the rest; there the anomalies are compared with check
// on the lines run accepted, which must be what run found.
func TestBadInputCorpus(t *testing.T) {
	want := readBadInputExpect(t)
	entries, err := os.ReadDir(badInputDir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "expect.txt" {
			continue
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(badInputDir, name))
			if err != nil {
				t.Fatal(err)
			}
			obs := observeBadInput(t, data)
			exp, ok := want[name]
			if !ok {
				// A file added without its line (another branch's
				// reproducer): say what both commands do now, for a
				// person to judge and copy into expect.txt.
				t.Errorf("no line in expect.txt; observed: %s", obs.line(name))
				return
			}
			compareBadInput(t, obs, exp)
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("expect.txt names %s, which is not in %s", name, badInputDir)
		}
	}
}

// badInputObs is what the two commands did with one input.
type badInputObs struct {
	runExit, checkExit int
	// rejected: the lines run set aside, as in expect.txt ("-" none).
	rejected      []int
	allRejected   bool   // every non-blank line
	checkErr      string // check's stderr
	runAnomalies  string // canonical cores of run's alerts
	checkReported bool   // check gave a report (on the input or the rest)
	// checkAnomalies: check's, on the input, or on the lines run
	// accepted when check rejected the input for a line run set aside.
	checkAnomalies string
	badReason      []string // lines set aside as late or oversized
}

func (o badInputObs) rejectedText() string {
	if len(o.rejected) == 0 {
		return "-"
	}
	var parts []string
	for _, l := range o.rejected {
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ",")
}

// line is the expect.txt line that states o.
func (o badInputObs) line(name string) string {
	l := fmt.Sprintf("%s %d %s %s", name, o.runExit, o.rejectedText(), o.runAnomalies)
	if o.checkReported && o.checkAnomalies != o.runAnomalies {
		l += " " + o.checkAnomalies
	}
	if o.runExit != o.checkExit {
		l += fmt.Sprintf(" (but check exits %d)", o.checkExit)
	}
	return l
}

func observeBadInput(t *testing.T, data []byte) badInputObs {
	var o badInputObs
	dl := filepath.Join(t.TempDir(), "dead.jsonl")
	var rout, rerr bytes.Buffer
	o.runExit = Main(context.Background(), append(slices.Clone(badInputRunArgs), "--dead-letter", dl), bytes.NewReader(data), &rout, &rerr)
	var cout, cerr bytes.Buffer
	o.checkExit = checkcmd.Main(badInputCheckArgs, nil, bytes.NewReader(data), &cout, &cerr)
	o.checkErr = cerr.String()
	t.Logf("run: exit %d\n%s%s", o.runExit, rout.String(), rerr.String())
	t.Logf("check: exit %d\n%s%s", o.checkExit, cout.String(), cerr.String())

	// What run set aside, by line.
	rejected := map[int]bool{}
	if b, err := os.ReadFile(dl); err == nil {
		for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var d deadLetterLine
			if err := json.Unmarshal([]byte(l), &d); err != nil {
				t.Fatalf("dead letter %q: %v", l, err)
			}
			switch d.Reason {
			case "late", "oversized":
				o.badReason = append(o.badReason, fmt.Sprintf("line %d %s", d.Line, d.Reason))
			}
			rejected[d.Line] = true
		}
	}
	// Lines as both commands number them: of the decompressed text.
	text := data
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			text, _ = io.ReadAll(zr) // a truncated stream: what it holds
		}
	}
	lines := strings.SplitAfter(string(text), "\n")
	o.allRejected = true
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if rejected[i+1] {
			o.rejected = append(o.rejected, i+1)
		} else {
			o.allRejected = false
		}
	}

	// run's anomalies: its alert lines.
	var runCores [][]string
	for l := range strings.SplitSeq(strings.TrimSpace(rout.String()), "\n") {
		if l == "" {
			continue
		}
		var a report.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("alert line %q: %v", l, err)
		}
		runCores = append(runCores, a.Core)
	}
	o.runAnomalies = coreSet(runCores)

	// check's anomalies: its report, or, on an input error, its report on
	// the lines run accepted.
	report := cout.Bytes()
	if o.checkExit == checkcmd.ExitError {
		if len(rejected) == 0 {
			// No line rejected: the input as a whole is (empty, or a
			// gzip stream broken off). check says why and nothing more.
			return o
		}
		var rest strings.Builder
		for i, l := range lines {
			if !rejected[i+1] {
				rest.WriteString(l)
			}
		}
		if strings.TrimSpace(rest.String()) == "" {
			o.checkReported, o.checkAnomalies = true, "-"
			return o
		}
		var out, errb bytes.Buffer
		if code := checkcmd.Main(badInputCheckArgs, nil, strings.NewReader(rest.String()), &out, &errb); code == checkcmd.ExitError {
			t.Errorf("check rejects the lines run accepted: %s", errb.String())
			return o
		}
		report = out.Bytes()
	}
	var rep struct {
		Anomalies []struct {
			Core []string `json:"core"`
		} `json:"anomalies"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		t.Fatalf("check's report: %v\n%s", err, report)
	}
	var checkCores [][]string
	for _, a := range rep.Anomalies {
		checkCores = append(checkCores, a.Core)
	}
	o.checkReported, o.checkAnomalies = true, coreSet(checkCores)
	return o
}

func compareBadInput(t *testing.T, o badInputObs, exp badInputExpect) {
	if o.runExit != o.checkExit || o.runExit != exp.exit {
		t.Errorf("exit: run %d, check %d, expect.txt %d", o.runExit, o.checkExit, exp.exit)
	}
	for _, b := range o.badReason {
		t.Errorf("%s: the corpus is meant to hold input errors only", b)
	}
	got := o.rejectedText()
	if o.allRejected && exp.rejected == "*" {
		got = "*"
	}
	if got != exp.rejected {
		t.Errorf("run rejected lines %s, expect.txt %s", got, exp.rejected)
	}
	if exp.rejected != "-" && exp.rejected != "*" && len(o.rejected) > 0 {
		// check names the first line it rejects; it must be one run
		// rejects too (check reads the whole history first, so a rule
		// about two transactions names the later one, as run does).
		if first := "-:" + strconv.Itoa(o.rejected[0]); !strings.Contains(o.checkErr, first) {
			t.Errorf("check's error does not name line %d, the first run rejects: %s", o.rejected[0], o.checkErr)
		}
	}
	if o.runAnomalies != exp.anomalies {
		t.Errorf("run's anomalies %s, expect.txt %s", o.runAnomalies, exp.anomalies)
	}
	if !o.checkReported {
		if exp.anomalies != "-" {
			t.Errorf("check reported nothing to compare, but expect.txt names anomalies %s", exp.anomalies)
		}
		return
	}
	wantCheck := exp.anomalies
	if exp.rest != "" {
		wantCheck = exp.rest
		for c := range strings.SplitSeq(exp.anomalies, ",") {
			if c != "-" && !slices.Contains(strings.Split(exp.rest, ","), c) {
				t.Errorf("expect.txt: run's anomaly %s is not among check's on the rest, %s", c, exp.rest)
			}
		}
	}
	if o.checkAnomalies != wantCheck {
		t.Errorf("check's anomalies %s, expect.txt %s", o.checkAnomalies, wantCheck)
	}
}

// TestBadInputMutations is the corpus's randomized counterpart: generated
// histories (registers and lists, some with injected anomalies) with a
// few lines damaged at random in the ways the corpus lists one by one,
// fed to both commands through stdin. Their exit statuses must agree. A
// damaged line is an input error for both (2); an undamaged history gets
// the same verdict from both. STREAMCHECK_BADINPUT_COUNT sets the count.
func TestBadInputMutations(t *testing.T) {
	count := 60
	if raceEnabled {
		count = 10
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_BADINPUT_COUNT")); err == nil && n > 0 {
		count = n
	}
	types := gen.InjectTypes()
	for i := range count {
		rng := rand.New(rand.NewPCG(uint64(i), 20))
		cfg, _ := gen.Preset("mixed")
		cfg.Txns, cfg.Seed, cfg.Keys, cfg.Sessions, cfg.Concurrency = 20+rng.IntN(40), uint64(i+1), 6, 4, 3
		if rng.IntN(2) == 0 {
			cfg.Inject = []string{types[rng.IntN(len(types))]}
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(native(t, h), "\n")
		var what []string
		for range rng.IntN(3) {
			j := rng.IntN(len(h.Txns))
			var w string
			lines, w = mutateLine(rng, lines, j)
			what = append(what, fmt.Sprintf("line %d: %s", j+1, w))
		}
		in := strings.Join(lines, "")
		var rout, rerr bytes.Buffer
		runCode := Main(context.Background(), badInputRunArgs, strings.NewReader(in), &rout, &rerr)
		var cout, cerr bytes.Buffer
		checkCode := checkcmd.Main(badInputCheckArgs, nil, strings.NewReader(in), &cout, &cerr)
		if runCode != checkCode {
			t.Errorf("history %d (%d txns, %v; %v): run exits %d, check %d\ncheck: %s\nrun: %s\ninput:\n%s",
				i, len(h.Txns), cfg.Inject, what, runCode, checkCode, cerr.String(), rerr.String(), in)
		}
	}
}

// mutateLine damages line j of lines in one of the ways the corpus lists
// and says how. Some damage is harmless (a blank line, CRLF, a write
// turned into an append on a key used nowhere else): both commands must
// agree then too.
func mutateLine(rng *rand.Rand, lines []string, j int) ([]string, string) {
	l := strings.TrimRight(lines[j], "\n")
	set := func(s string) { lines[j] = s + "\n" }
	switch rng.IntN(11) {
	case 0:
		set("not json")
		return lines, "not JSON"
	case 1:
		set(l[:rng.IntN(len(l))])
		return lines, "truncated"
	case 2:
		set(strings.Replace(l, `"status":`, `"statuz":`, 1))
		return lines, "no status"
	case 3:
		set(strings.Replace(l, `"committed"`, `"comitted"`, 1))
		return lines, "misspelt status (if committed)"
	case 4:
		// The same event again, later: a duplicate id.
		k := j + 1 + rng.IntN(len(lines)-j)
		lines = slices.Insert(lines, k, l+"\n")
		return lines, fmt.Sprintf("repeated at line %d", k+1)
	case 5:
		if strings.Contains(l, `["w",`) {
			set(strings.Replace(l, `["w",`, `["append",`, 1))
			return lines, "a write turned into an append"
		}
		set(strings.Replace(l, `["append",`, `["w",`, 1))
		return lines, "an append turned into a write"
	case 6:
		lines = slices.Insert(lines, j, "\n")
		return lines, "a blank line before it"
	case 7:
		set(l + "\r")
		return lines, "CRLF"
	case 8:
		var ev map[string]json.RawMessage
		json.Unmarshal([]byte(l), &ev)
		delete(ev, "start")
		delete(ev, "end")
		b, _ := json.Marshal(ev)
		set(string(b))
		return lines, "no timestamps"
	case 9:
		set(strings.Replace(l, `"ops":[`, `"ops":[["w","big",9223372036854775808],`, 1))
		return lines, "a value beyond int64"
	}
	set(strings.Replace(l, `"ops":[`, `"ops":[["r","x",[1,null]],`, 1))
	return lines, "a list read with a null element"
}

package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

func native(t *testing.T, h *history.History) string {
	t.Helper()
	var b []byte
	for i := range h.Txns {
		b = ingest.AppendNative(b, &h.Txns[i])
		b = append(b, '\n')
	}
	return string(b)
}

// TestStdinVerdictEqualsCheck: at end of stdin the exit code is check's,
// every alert line parses in the report schema, and each alert's core is
// one check also finds invalid on its own.
func TestStdinVerdictEqualsCheck(t *testing.T) {
	cfg, _ := gen.Preset("mixed")
	cfg.Txns, cfg.Seed = 1500, 5
	cfg.Inject = []string{"lost-update", "write-skew", "G1c"}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--http=", "--lateness", "5ms", "--indoubt", "1ms", "--initial-state", "empty", "--tick", "1ms"}, strings.NewReader(native(t, h)), &out, &errb)
	opts := history.DefaultOptions()
	opts.Level, opts.InDoubt = history.StrictSerializable, 1e6
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := ExitOK
	if res.Verdict == incremental.Invalid {
		want = ExitAnomaly
	}
	if code != want {
		t.Fatalf("exit %d, check says %s\nstderr: %s", code, res.Verdict, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("want at least the 3 injected anomalies, got %d alerts:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		var a report.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("alert line %q: %v", l, err)
		}
		if a.ID == "" || len(a.Core) == 0 || a.Level != "strict-serializable" {
			t.Errorf("alert %+v", a)
		}
		sub := incremental.Project(h, opts, a.Core)
		r, err := incremental.Check(context.Background(), sub, opts, incremental.Config{})
		if err != nil || r.Verdict != incremental.Invalid {
			t.Errorf("alert core %v does not violate on its own: %v %v", a.Core, r.Verdict, err)
		}
	}
	if !strings.Contains(errb.String(), "end of input") {
		t.Errorf("no final summary: %s", errb.String())
	}
}

// TestBadInputIsDeadLettered: undecodable and late lines are set aside with
// their line and reason; the run goes on, says the check was partial, and
// exits 2 at the end: the undecodable line is an input error for check.
func TestBadInputIsDeadLettered(t *testing.T) {
	dir := t.TempDir()
	dl := filepath.Join(dir, "dead.jsonl")
	in := strings.Join([]string{
		`{"id":"a","start":100,"end":200,"status":"committed","ops":[["w","x",1]]}`,
		`not json`,
		`{"id":"b","start":300,"end":400,"status":"committed","ops":[["r","x",1]]}`,
		`{"id":"late","start":10,"end":20,"status":"committed","ops":[["w","x",9]]}`,
		`{"id":"c","start":500,"end":600,"status":"committed","ops":[["r","x",1]]}`,
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--http=", "--lateness", "50", "--initial-state", "empty", "--dead-letter", dl, "--tick", "1"}, strings.NewReader(in), &out, &errb)
	if code != ExitError {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	b, _ := os.ReadFile(dl)
	got := string(b)
	if !strings.Contains(got, `"line":2`) || !strings.Contains(got, `"reason":"undecodable"`) || !strings.Contains(got, `"id":"late"`) {
		t.Errorf("dead letters:\n%s", got)
	}
	if !strings.Contains(errb.String(), "PARTIAL") {
		t.Errorf("summary does not say partial: %s", errb.String())
	}
}

// TestFollowStopsOnCancel: a followed file is read as it grows; cancelling
// finishes the batch in hand and flushes its alerts.
func TestFollowStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "events.jsonl")
	// A stale read: W then R after W ended, reading the initial value.
	os.WriteFile(src, []byte(`{"id":"W","start":0,"end":10,"status":"committed","ops":[["w","x",1]]}`+"\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"--http=", "--source", src, "--lateness", "5", "--initial-state", "empty", "--tick", "1", "--poll", "10ms"}, nil, &out, &errb)
	}()
	time.Sleep(50 * time.Millisecond)
	f, _ := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"R","start":20,"end":30,"status":"committed","ops":[["r","x",null]]}` + "\n")
	f.WriteString(`{"id":"Z","start":100,"end":110,"status":"committed","ops":[]}` + "\n")
	f.Close()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != ExitAnomaly || !strings.Contains(out.String(), `"core":["R","W"]`) && !strings.Contains(out.String(), `"core":["W","R"]`) {
			t.Fatalf("exit %d, alerts %s, stderr %s", code, out.String(), errb.String())
		}
		// W ended at 10 and R began at 20 (Δ = 0): the real-time edge
		// the stale read rests on has 10 ns of slack.
		if !strings.Contains(out.String(), `"slack_ns":10`) {
			t.Errorf("no slack on the real-time step: %s", out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after cancel")
	}
}

// TestFileResumes: a followed file with a state directory resumes after
// an interrupt at the byte and line where it stopped: every event is
// counted once and line numbers in dead letters continue.
func TestFileResumes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "events.jsonl")
	dl := filepath.Join(dir, "dead.jsonl")
	ev := func(id string, start int) string {
		return fmt.Sprintf(`{"id":%q,"start":%d,"end":%d,"status":"committed","ops":[["w","x",%d]]}`+"\n", id, start, start+5, start)
	}
	os.WriteFile(src, []byte(ev("a", 10)+ev("b", 20)+"garbage\n"), 0o644)
	args := []string{"--http=", "--source", src, "--state-dir", filepath.Join(dir, "st"), "--dead-letter", dl, "--lateness", "5",
		"--tick", "1", "--poll", "5ms", "--status", "10ms", "--initial-state", "empty"}
	runUntil := func(want string) string { t.Helper(); return runFollowUntil(t, args, want) }
	runUntil("run: 3 messages;")
	f, _ := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(ev("c", 30) + "more garbage\n")
	f.Close()
	if l := runUntil("run: 5 messages;"); !strings.Contains(l, "resuming from checkpoint") {
		t.Errorf("did not resume: %s", l)
	}
	tot := totals(t, filepath.Join(dir, "st"))
	if tot["messages"] != 5 || tot["accepted"] != 3 || tot["undecodable"] != 2 {
		t.Errorf("totals %v", tot)
	}
	b, _ := os.ReadFile(dl)
	if !strings.Contains(string(b), `"line":3`) || !strings.Contains(string(b), `"line":5`) {
		t.Errorf("dead letters do not carry the file's line numbers:\n%s", b)
	}
}

// TestPinnedCapIsInexact: a valid stream whose pinned transactions exceed
// --max-pinned ends with exit 3 (unknown, as check's spent budget) and a
// summary that says INEXACT; without the cap the same stream exits 0.
func TestPinnedCapIsInexact(t *testing.T) {
	cfg, _ := gen.Preset("blindw-rw")
	cfg.Txns, cfg.Seed, cfg.Keys = 400, 3, 50
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := native(t, h)
	for _, tc := range []struct {
		cap  string
		want int
	}{{"0", ExitOK}, {"2", ExitUnknown}} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"--http=", "--evict", "--max-pinned", tc.cap, "--lateness", "5ms", "--tick", "1ms"}, strings.NewReader(in), &out, &errb)
		if code != tc.want {
			t.Fatalf("--max-pinned %s: exit %d, want %d\nstderr: %s", tc.cap, code, tc.want, errb.String())
		}
		if inexact := strings.Contains(errb.String(), "INEXACT"); inexact != (tc.want == ExitUnknown) {
			t.Errorf("--max-pinned %s: summary says INEXACT=%v:\n%s", tc.cap, inexact, errb.String())
		}
		if out.Len() > 0 {
			t.Errorf("--max-pinned %s: alerts on a valid stream:\n%s", tc.cap, out.String())
		}
	}
}

// TestExitStatusAtEndOfInput: at the end of standard input run exits by
// the rule it shares with check (cliutil.Outcome): 2 on an input error or
// when nothing was checked, else 1 on an alert, else 3 when events were set
// aside for a reason of the stream's own (late), else 0. Each case's
// lines are in arrival order; lateness is 50ns.
func TestExitStatusAtEndOfInput(t *testing.T) {
	const (
		w1   = `{"id":"w1","session":"a","start":100,"end":110,"status":"committed","ops":[["w","x",1]]}`
		r1   = `{"id":"r1","session":"b","start":200,"end":210,"status":"committed","ops":[["r","x",1]]}`
		late = `{"id":"late","session":"c","start":10,"end":20,"status":"committed","ops":[["w","z",9]]}`
		lu1  = `{"id":"lu1","session":"d","start":300,"end":320,"status":"committed","ops":[["r","y",null],["w","y",1]]}`
		lu2  = `{"id":"lu2","session":"e","start":305,"end":325,"status":"committed","ops":[["r","y",null],["w","y",2]]}`
		bad  = `{"id":"bad","session":"f","start":400,"end":410,"status":"comitted","ops":[]}`
		mix  = `{"id":"mix","session":"g","start":400,"end":410,"status":"committed","ops":[["append","x",2]]}`
		// A late event still says what its keys are (check reads every
		// transaction): q is a list, so writing it is an input error.
		lateList = `{"id":"lateList","session":"h","start":10,"end":20,"status":"committed","ops":[["append","q",1]]}`
		writeQ   = `{"id":"writeQ","session":"i","start":400,"end":410,"status":"committed","ops":[["w","q",2]]}`
	)
	for _, tc := range []struct {
		name    string
		lines   []string
		want    int
		summary string
	}{
		{"valid", []string{w1, r1}, ExitOK, ""},
		{"empty", nil, ExitError, "no transactions"},
		{"all rejected", []string{bad}, ExitError, "no transactions"},
		{"late only", []string{w1, r1, late}, ExitUnknown, "PARTIAL"},
		{"late and an alert", []string{w1, r1, late, lu1, lu2}, ExitAnomaly, "1 alert"},
		{"invalid and late", []string{w1, r1, late, bad}, ExitError, "INPUT ERROR: 1 event"},
		{"invalid and an alert", []string{w1, r1, lu1, lu2, bad}, ExitError, "1 alert"},
		{"key used as list and register", []string{w1, r1, mix}, ExitError, "INPUT ERROR: 1 event"},
		{"a late event's list key, then written", []string{w1, r1, lateList, writeQ}, ExitError, "INPUT ERROR: 1 event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Join(tc.lines, "\n")
			var out, errb bytes.Buffer
			code := Main(context.Background(), []string{"--http=", "--lateness", "50", "--initial-state", "empty", "--tick", "1"}, strings.NewReader(in), &out, &errb)
			if code != tc.want || !strings.Contains(errb.String(), tc.summary) {
				t.Errorf("exit %d, want %d with %q in the summary:\n%s%s", code, tc.want, tc.summary, out.String(), errb.String())
			}
			if strings.Contains(tc.summary, "alert") && !strings.Contains(out.String(), `"core":["lu1","lu2"]`) {
				t.Errorf("the alert was not delivered:\n%s", out.String())
			}
		})
	}
}

// TestKindsSurviveRestart: what a key was used as is checkpointed with the
// loop, so a restart still rejects an event using it the other way, as an
// uninterrupted run (and check) would.
func TestKindsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "events.jsonl")
	dl := filepath.Join(dir, "dead.jsonl")
	os.WriteFile(src, []byte(`{"id":"a","start":10,"end":15,"status":"committed","ops":[["append","l",1]]}`+"\n"), 0o644)
	args := []string{"--http=", "--source", src, "--state-dir", filepath.Join(dir, "st"), "--dead-letter", dl, "--lateness", "5",
		"--tick", "1", "--poll", "5ms", "--status", "10ms", "--initial-state", "empty"}
	runUntil := func(want string) { t.Helper(); runFollowUntil(t, args, want) }
	runUntil("run: 1 messages;")
	f, _ := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"b","start":20,"end":25,"status":"committed","ops":[["w","l",2]]}` + "\n")
	f.Close()
	runUntil("run: 2 messages;")
	if tot := totals(t, filepath.Join(dir, "st")); tot["invalid"] != 1 {
		t.Errorf("totals %v: want the register write of list key l rejected as invalid", tot)
	}
	b, _ := os.ReadFile(dl)
	if !strings.Contains(string(b), `"line":2`) || !strings.Contains(string(b), "used as a list and as a register") {
		t.Errorf("dead letters:\n%s", b)
	}
}

// TestStdinFirstEventNotHeldBack: telling an Elle history from native
// events on stdin looks at the first line only, so on a live pipe
// (canary | run) the first event is read as soon as its line is complete,
// not once 64 KB have arrived.
func TestStdinFirstEventNotHeldBack(t *testing.T) {
	pr, pw := io.Pipe()
	logs := &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- Main(context.Background(), []string{"--http=", "--status", "5ms", "--initial-state", "empty"}, pr, io.Discard, logs)
	}()
	pw.Write([]byte(`{"id":"a","start":10,"end":15,"status":"committed","ops":[["w","x",1]]}` + "\n"))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "run: 1 messages;") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	seen := strings.Contains(logs.String(), "run: 1 messages;")
	pw.Close()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d: %s", code, logs.String())
	}
	if !seen {
		t.Fatalf("the first event was not read while the pipe stayed open:\n%s", logs.String())
	}
}

// runFollowUntil runs a followed-file run until its log says want (or 10 s
// pass), interrupts it, and returns the log; the run must exit 0.
func runFollowUntil(t *testing.T, args []string, want string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int)
	go func() { done <- Main(ctx, args, nil, io.Discard, logs) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d: %s", code, logs.String())
	}
	return logs.String()
}

// TestCPUProfileWritten: --cpuprofile leaves a profile pprof can read (its
// gzip header) once the run ends, and a path it cannot create is an error
// before anything is read.
func TestCPUProfileWritten(t *testing.T) {
	cfg, _ := gen.Preset("mixed")
	cfg.Txns, cfg.Seed = 300, 3
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	var out, errb bytes.Buffer
	args := []string{"--http=", "--lateness", "5ms", "--initial-state", "empty", "--tick", "1ms", "--cpuprofile", prof}
	if code := Main(context.Background(), args, strings.NewReader(native(t, h)), &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(prof)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile %q: %d bytes, err %v; want a gzip-compressed pprof profile", prof, len(b), err)
	}
	args[len(args)-1] = filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof")
	errb.Reset()
	if code := Main(context.Background(), args, strings.NewReader(native(t, h)), &out, &errb); code != ExitError || !strings.Contains(errb.String(), "--cpuprofile") {
		t.Fatalf("unwritable profile: exit %d, stderr %q; want exit %d naming --cpuprofile", code, errb.String(), ExitError)
	}
}

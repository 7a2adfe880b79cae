package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/streamcheck/streamcheck/internal/report"
)

var update = flag.Bool("update", false, "rewrite the testscript files' cmp expectations")

// TestMain registers the streamcheck command in the test binary, so the
// scripts run the real main in a subprocess without a go build.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"streamcheck": main,
	})
}

// TestScripts runs testdata/script/*.txtar. Beside the standard commands:
//
//	exitcode N PROG ARGS...   run PROG, expect exit status N exactly
//	gzip FILE                 compress FILE to FILE.gz
//	reportjson                the last stdout is exactly one report.Report
//	                          JSON object with no unknown fields
//
// and the condition [dot] (Graphviz installed; required under CI=true).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":   cmdExitCode,
			"gzip":       cmdGzip,
			"reportjson": cmdReportJSON,
		},
		Condition: func(cond string) (bool, error) {
			if cond != "dot" {
				return false, errors.New("unknown condition " + cond)
			}
			_, err := exec.LookPath("dot")
			if err != nil && os.Getenv("CI") == "true" {
				return false, errors.New("graphviz (dot) is required under CI=true")
			}
			return err == nil, nil
		},
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func cmdGzip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gzip FILE")
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[0]+".gz"), b.Bytes(), 0o644))
}

func cmdReportJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: reportjson")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(ts.ReadFile("stdout"))))
	dec.DisallowUnknownFields()
	var r report.Report
	if err := dec.Decode(&r); err != nil {
		ts.Fatalf("stdout is not a report: %v", err)
	}
	if dec.More() {
		ts.Fatalf("stdout holds more than one JSON value")
	}
	switch {
	case r.Verdict == "valid" && (r.Valid == nil || !*r.Valid),
		r.Verdict == "invalid" && (r.Valid == nil || *r.Valid),
		r.Verdict == "unknown" && r.Valid != nil:
		ts.Fatalf("verdict %q disagrees with valid %v", r.Verdict, r.Valid)
	}
}

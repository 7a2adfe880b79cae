package convertcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/internal/checkcmd"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func check(t *testing.T, path string, level string) int {
	t.Helper()
	var out, errb bytes.Buffer
	code := checkcmd.Main([]string{"--level", level, path}, nil, nil, &out, &errb)
	if code == checkcmd.ExitError {
		t.Fatalf("check %s: %s", path, errb.String())
	}
	return code
}

// Acceptance 3: convert's output of a Cobra (and a dbcop) history is
// accepted by check with the same verdict as the original, at both
// serializable levels, whatever the target.
func TestConvertThenCheck(t *testing.T) {
	dir := t.TempDir()
	peers := "../../ingest/testdata/peers/"
	// A dbcop original: the text fixture converted to dbcop first.
	dbcop := filepath.Join(dir, "pg.bincode")
	if code, _, errs := run(t, "--to", "dbcop", peers+"text/pg_ser_bug.txt", dbcop); code != exitOK {
		t.Fatalf("to dbcop: %s", errs)
	}
	// With --to dbcop, a directory gets history.bincode, which ReadFile
	// finds there.
	if code, _, errs := run(t, "--to", "dbcop", peers+"cobra/cock-G2", dir); code != exitOK {
		t.Fatalf("to a directory: %s", errs)
	}
	if got, want := check(t, dir, "serializable"), check(t, peers+"cobra/cock-G2", "serializable"); got != want {
		t.Fatalf("dbcop directory: check exits %d, the original %d", got, want)
	}
	for _, in := range []string{peers + "cobra/cock-G2", peers + "cobra/chengRW-100", dbcop} {
		for _, to := range Targets {
			out := filepath.Join(dir, filepath.Base(in)+"."+to)
			code, _, errs := run(t, "--to", to, in, out)
			if code != exitOK {
				t.Fatalf("%s --to %s: %s", in, to, errs)
			}
			for _, level := range []string{"serializable", "strong-session-serializable"} {
				if got, want := check(t, out, level), check(t, in, level); got != want {
					t.Errorf("%s --to %s: check %s exits %d, the original %d", in, to, level, got, want)
				}
			}
		}
	}
}

// A target that cannot say the history is an error naming the
// transaction, and nothing is written.
func TestConvertRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"t1","session":"s","status":"committed","ops":[["append","l",1]]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "h.bincode")
	code, _, errs := run(t, "--to", "dbcop", in, out)
	if code != exitError || !strings.Contains(errs, "(txn t1): field ops[0]: the target format cannot say this: dbcop has no lists") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("output written: %v", err)
	}
	if code, _, errs := run(t, "--to", "csv", in, "-"); code != exitError || !strings.Contains(errs, `unknown output format "csv"`) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if code, _, _ := run(t, in); code != exitError {
		t.Fatalf("one argument: exit %d", code)
	}
}

// Standard input and output.
func TestConvertStdio(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--to", "text", "-", "-"}, strings.NewReader("w 1 2\n=====\nr 1 2\n"), &out, &errb)
	if code != exitOK || out.String() != "w(1,2,0,0)\nr(1,2,1,1)\n" {
		t.Fatalf("exit %d, out %q, stderr %q", code, out.String(), errb.String())
	}
}

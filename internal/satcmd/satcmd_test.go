package satcmd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/internal/cnfgen"
	"github.com/streamcheck/streamcheck/solver"
)

// TestMain makes the test binary double as the streamcheck-sat command:
// started under that name it is `streamcheck sat`, as cmd/streamcheck will
// run it. Otherwise it copies itself under that name into a temporary
// directory put first on PATH, so TestProcess runs the command as a real
// process and TestMinisatRatio times it like minisat (start-up, parse,
// solve). testscript.Main does the same, but its package needs
// golang.org/x/tools, which go.mod does not carry.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "streamcheck-sat" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(installSelf(m))
}

func installSelf(m *testing.M) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "satcmd test: cannot find the test binary:", err)
		return 1
	}
	bin, err := os.MkdirTemp("", "satcmd-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "satcmd test:", err)
		return 1
	}
	defer os.RemoveAll(bin)
	data, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(filepath.Join(bin, "streamcheck-sat"), data, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "satcmd test: cannot install streamcheck-sat:", err)
		return 1
	}
	os.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return m.Run()
}

// TestProcess runs the command as a process: exit codes, stdin, gzip and
// the stderr message reach the caller unchanged through a real exit.
func TestProcess(t *testing.T) {
	dir := t.TempDir()
	sat := filepath.Join(dir, "sat.cnf")
	if err := os.WriteFile(sat, []byte("c x3 holds, x1 and x2 do not\np cnf 3 3\n-1 0\n-2 0\n1 2 3 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n"))
	zw.Close()
	for _, tc := range []struct {
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		{[]string{sat}, "", ExitSat, "s SATISFIABLE\nv -1 -2 3 0\n", ""},
		{[]string{"--seed", "9", "-"}, zipped.String(), ExitUnsat, "s UNSATISFIABLE\n", ""},
		{[]string{"-"}, "p cnf 1 1\n2 0\n", ExitError, "",
			"streamcheck sat: -: dimacs: line 2: literal 2 is outside the 1 variables of the header\n"},
		{[]string{"--timeout", "100ms", "-"}, pigeonholeText(t, 12), ExitUnknown, "s UNKNOWN\n", ""},
	} {
		cmd := exec.Command("streamcheck-sat", tc.args...)
		cmd.Stdin = strings.NewReader(tc.stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.HasSuffix(out.String(), tc.stdout) || errb.String() != tc.stderr {
			t.Errorf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, out.String(), errb.String())
		}
	}
}

func pigeonholeText(t *testing.T, holes int) string {
	var b bytes.Buffer
	if err := solver.WriteDIMACS(&b, cnfgen.Pigeonhole(holes)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// run calls Main in process.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodesAndOutput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sat := file("sat.cnf", "p cnf 3 2\n1 2 0\n-1 3 0\n")
	unsat := file("unsat.cnf", "p cnf 1 2\n1 0\n-1 0\n")
	cycle := file("cycle.cnf", "p cnf 1 0\nn 2\ne 1 0 1\ne -1 0 1\nb 1 0\n")
	acyc := file("acyclic.cnf", "p cnf 1 0\nn 2\ne 1 0 1\ne -1 1 0\n")
	bad := file("bad.cnf", "p cnf 2 1\n1 3 0\n")
	// x1 picks 0->1 or 1->0; the base edges 1->2->0 rule out 0->1.
	choice := file("choice.cnf", "p cnf 1 0\nn 3\nb 1 2\nb 2 0\ne 1 0 1\ne -1 1 0\n")
	// As choice, but a unit clause forces x2, whose edge 2->1 closes a
	// cycle with the base edge 1->2; the e2 edge 0->2 is harmless.
	choiceCycle := file("choice-cycle.cnf", "p cnf 2 1\nn 3\nb 1 2\nb 2 0\ne 1 0 1\ne -1 1 0\ne2 2 -1 0 2\ne 2 2 1\n2 0\n")
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string // substring of stdout
		err   string // substring of stderr
	}{
		{"sat", "", []string{sat}, ExitSat, "s SATISFIABLE\n", ""},
		{"unsat", "", []string{unsat}, ExitUnsat, "s UNSATISFIABLE\n", ""},
		{"edges unsat", "", []string{cycle}, ExitUnsat, "s UNSATISFIABLE\n", ""},
		{"edges sat", "", []string{acyc}, ExitSat, "s SATISFIABLE\n", ""},
		{"edges choice", "", []string{choice}, ExitSat, "s SATISFIABLE\nv -1 0\n", ""},
		{"edges choice cycle", "", []string{choiceCycle}, ExitUnsat, "s UNSATISFIABLE\n", ""},
		{"stdin", "p cnf 1 1\n-1 0\n", []string{"-"}, ExitSat, "v -1 0\n", ""},
		{"flags after file", "", []string{sat, "--seed", "7", "--timeout", "1m"}, ExitSat, "s SATISFIABLE", ""},
		{"double dash", "", []string{"--seed=3", "--", sat}, ExitSat, "s SATISFIABLE", ""},
		{"bad input names the line", "", []string{bad}, ExitError, "", "bad.cnf: dimacs: line 2: literal 3"},
		{"missing file", "", []string{filepath.Join(dir, "nope.cnf")}, ExitError, "", "no such file"},
		{"no file", "", nil, ExitError, "", "want exactly one FILE.cnf, got 0"},
		{"two files", "", []string{sat, unsat}, ExitError, "", "got 2"},
		{"bad flag", "", []string{"--speed", "3", sat}, ExitError, "", "flag provided but not defined"},
		{"bad timeout", "", []string{"--timeout", "soon", sat}, ExitError, "", "invalid value"},
		{"negative timeout", "", []string{"--timeout", "-1s", sat}, ExitError, "", "negative"},
		{"help on stdout", "", []string{"-h"}, ExitUnknown, "usage: streamcheck sat", ""},
		{"gzip bad", "\x1f\x8bxx", []string{"-"}, ExitError, "", "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			if code == ExitError && out != "" && strings.Contains(out, "\ns ") {
				t.Fatalf("an error must not print a status line:\n%s", out)
			}
		})
	}
}

// A gzipped file decides like the plain one, and both agree with the
// model check on a formula long enough to need several v lines.
func TestGzipAndModelLines(t *testing.T) {
	c := cnfgen.RandomKSAT(3, 150, 3.5, 1) // ratio 3.5: almost surely sat
	var plain bytes.Buffer
	if err := solver.WriteDIMACS(&plain, c); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(plain.Bytes())
	zw.Close()
	for name, in := range map[string]string{"plain": plain.String(), "gzip": zipped.String()} {
		code, out, errs := run(t, in, "-")
		r, err := parseCompetition(out, code)
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", name, err, out, errs)
		}
		if r.st != solver.Sat {
			t.Fatalf("%s: got %v, want SAT", name, r.st)
		}
		if len(r.model) != c.NumVars {
			t.Fatalf("%s: model has %d variables, want %d", name, len(r.model), c.NumVars)
		}
		if err := c.Verify(r.value); err != nil {
			t.Fatalf("%s: printed model is wrong: %v", name, err)
		}
	}
}

func TestWriteModelLines(t *testing.T) {
	for _, n := range []int{0, 1, 17, 18, 19, 20, 100, 1000, 12345} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		writeModel(w, n, func(v int) bool { return v%3 == 0 })
		w.Flush()
		out := b.String()
		r, err := parseCompetition("s SATISFIABLE\n"+out, ExitSat)
		if err != nil {
			t.Fatalf("n=%d: %v\n%s", n, err, out)
		}
		for v := 1; v <= n; v++ {
			if r.model[v] != (v%3 == 0) {
				t.Fatalf("n=%d: variable %d printed wrong", n, v)
			}
		}
		if len(r.model) != n {
			t.Fatalf("n=%d: %d variables printed", n, len(r.model))
		}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if len(line) > maxLine || len(line) < 3 || line[:2] != "v " {
				t.Fatalf("n=%d: bad line %q", n, line)
			}
		}
	}
}

// A formula far beyond the timeout answers UNKNOWN with exit 0, promptly.
func TestTimeoutUnknown(t *testing.T) {
	dir := t.TempDir()
	path := writeCNF(t, dir, "php12.cnf", cnfgen.Pigeonhole(12))
	start := time.Now()
	code, out, errs := run(t, "", "--timeout", "200ms", path)
	if code != ExitUnknown || !strings.Contains(out, "s UNKNOWN\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a 200ms timeout took %v", d)
	}
}

func ExampleMain() {
	in := "p cnf 2 2\n1 2 0\n-1 0\n"
	var out bytes.Buffer
	code := Main([]string{"-"}, strings.NewReader(in), &out, os.Stderr)
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "c ") && line != "" {
			fmt.Println(line)
		}
	}
	fmt.Println("exit", code)
	// Output:
	// s SATISFIABLE
	// v -1 2 0
	// exit 10
}

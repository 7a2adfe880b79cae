package satcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/solver"
)

// result is one solver's answer on one file.
type result struct {
	st    solver.Status
	model map[int]bool // variable -> value, when st == Sat
	wall  time.Duration
	cpu   time.Duration // user+system time of the process, when run as one
}

func (r result) value(l int) bool {
	if l < 0 {
		return !r.model[-l]
	}
	return r.model[l]
}

func writeCNF(t testing.TB, dir, name string, c *solver.CNF) string {
	t.Helper()
	var b bytes.Buffer
	if err := solver.WriteDIMACS(&b, c); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// parseCompetition reads SAT-competition output ("s" and "v" lines) and
// checks that the exit code matches the "s" line.
func parseCompetition(out string, code int) (result, error) {
	var r result
	sLines := 0
	sawEnd := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "s "):
			sLines++
			switch line {
			case "s SATISFIABLE":
				r.st = solver.Sat
			case "s UNSATISFIABLE":
				r.st = solver.Unsat
			case "s UNKNOWN":
				r.st = solver.Unknown
			default:
				return r, fmt.Errorf("bad status line %q", line)
			}
		case strings.HasPrefix(line, "v "):
			if len(line) > maxLine {
				return r, fmt.Errorf("v line of %d bytes, more than %d", len(line), maxLine)
			}
			if r.model == nil {
				r.model = map[int]bool{}
			}
			for _, f := range strings.Fields(line[2:]) {
				l, err := strconv.Atoi(f)
				if err != nil {
					return r, fmt.Errorf("bad literal %q", f)
				}
				if sawEnd {
					return r, errors.New("literal after the terminating 0")
				}
				switch {
				case l == 0:
					sawEnd = true
				case l > 0:
					r.model[l] = true
				default:
					r.model[-l] = false
				}
			}
		case line == "" || strings.HasPrefix(line, "c ") || line == "c":
		default:
			return r, fmt.Errorf("unexpected output line %q", line)
		}
	}
	if sLines != 1 {
		return r, fmt.Errorf("%d status lines, want 1", sLines)
	}
	if r.st == solver.Sat && !sawEnd {
		return r, errors.New("model without the terminating 0")
	}
	if r.st != solver.Sat && r.model != nil {
		return r, errors.New("v lines without s SATISFIABLE")
	}
	if want := map[solver.Status]int{solver.Sat: ExitSat, solver.Unsat: ExitUnsat, solver.Unknown: ExitUnknown}[r.st]; code != want {
		return r, fmt.Errorf("exit code %d with %v", code, r.st)
	}
	return r, nil
}

// runOurs runs `streamcheck sat` in process.
func runOurs(path string, timeout time.Duration) (result, error) {
	var out, errb bytes.Buffer
	start := time.Now()
	code := Main([]string{"--timeout", timeout.String(), path}, nil, &out, &errb)
	wall := time.Since(start)
	if code == ExitError {
		return result{}, fmt.Errorf("streamcheck sat %s: exit 1: %s", path, errb.String())
	}
	r, err := parseCompetition(out.String(), code)
	r.wall = wall
	if err != nil {
		return r, fmt.Errorf("streamcheck sat %s: %v\n%s", path, err, out.String())
	}
	return r, nil
}

// runOursBinary runs `streamcheck sat` as its own process (the test binary
// under the name streamcheck-sat, see TestMain), so that timings compare
// like with like against minisat: start-up, parsing and solving.
func runOursBinary(path string, timeout time.Duration) (result, error) {
	cmd := exec.Command("streamcheck-sat", "--timeout", timeout.String(), path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return result{}, err
	}
	if code == ExitError {
		return result{}, fmt.Errorf("streamcheck-sat %s: exit 1: %s", path, errb.String())
	}
	r, err := parseCompetition(out.String(), code)
	r.wall = wall
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, err
}

// runMinisat runs minisat on path. minisat exits 10 or 20 and writes
// "SAT\n<model> 0\n", "UNSAT\n" or "INDET\n" to its result file; on its CPU
// limit it answers INDET. The context kill is a backstop for a stuck process.
func runMinisat(path string, timeout time.Duration) (result, error) {
	outFile := path + ".minisat"
	cpuLim := max(1, int((timeout+time.Second-1)/time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "minisat", "-verb=0", fmt.Sprintf("-cpu-lim=%d", cpuLim), path, outFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start)}
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return r, fmt.Errorf("minisat: %v", err)
	}
	if ctx.Err() != nil {
		return r, nil // killed: unknown
	}
	res, err := os.ReadFile(outFile)
	if err != nil {
		if code == 0 || code == 1 { // interrupted before writing
			return r, nil
		}
		return r, fmt.Errorf("minisat exit %d without a result file: %v\n%s", code, err, out.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(res))
	sc.Buffer(nil, 1<<26)
	sc.Scan()
	switch first := sc.Text(); {
	case first == "SAT" && code == 10:
		r.st = solver.Sat
		r.model = map[int]bool{}
		sc.Scan()
		for _, f := range strings.Fields(sc.Text()) {
			l, err := strconv.Atoi(f)
			if err != nil {
				return r, fmt.Errorf("minisat model: %v", err)
			}
			if l > 0 {
				r.model[l] = true
			} else if l < 0 {
				r.model[-l] = false
			}
		}
	case first == "UNSAT" && code == 20:
		r.st = solver.Unsat
	case first == "INDET":
	default:
		return r, fmt.Errorf("minisat: exit %d with result %q", code, first)
	}
	return r, nil
}

// needMinisat skips the test when minisat is missing, except under CI,
// where a missing reference solver must fail the run rather than pass it.
func needMinisat(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("minisat"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("minisat not found (CI=true, so this is a failure; apt-get install minisat): %v", err)
		}
		t.Skipf("minisat not found, skipping the comparison (apt-get install minisat): %v", err)
	}
}

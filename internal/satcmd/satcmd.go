package satcmd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/streamcheck/streamcheck/solver"
)

// Exit codes of the SAT competition (and minisat), plus 1 for errors.
const (
	ExitUnknown = 0
	ExitError   = 1
	ExitSat     = 10
	ExitUnsat   = 20
)

const usage = `usage: streamcheck sat [--timeout D] [--seed N] FILE.cnf

Decides a DIMACS CNF file (FILE "-" is standard input; gzip is detected by
its magic bytes) with streamcheck's CDCL solver. The file may use the edge
extension of the acyclicity theory (lines n, b, e, e2; see solver/dimacs.go).
Output follows the SAT competition: "s SATISFIABLE" and "v" lines of the
model, exit 10; "s UNSATISFIABLE", exit 20; "s UNKNOWN" when the timeout
strikes, exit 0; exit 1 with a message on stderr for bad usage or input.

`

// Main runs `streamcheck sat` with args (the words after "sat") and returns
// the exit code. It never calls os.Exit, so tests run it in process.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainContext(context.Background(), args, stdin, stdout, stderr)
}

// MainContext is Main under ctx: cancelling ctx (for example on SIGINT)
// stops the search, which then reports s UNKNOWN like a timeout.
func MainContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	start := time.Now()
	fs := flag.NewFlagSet("streamcheck sat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 0, "give up after `D` (e.g. 30s) and answer s UNKNOWN; 0 means no limit")
	seed := fs.Uint64("seed", 0, "seed `N` for the solver's tie breaking; the same seed repeats the same search")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	// -h prints the usage on stdout, as every command's help does; a bad
	// flag prints it on stderr with the error.
	var parseOut bytes.Buffer
	fs.SetOutput(&parseOut)
	files, err := parseArgs(fs, args)
	fs.SetOutput(stderr)
	if errors.Is(err, flag.ErrHelp) {
		stdout.Write(parseOut.Bytes())
		return ExitUnknown
	}
	stderr.Write(parseOut.Bytes())
	if err != nil {
		return ExitError // flag has printed the message and the usage
	}
	if len(files) != 1 {
		fmt.Fprintf(stderr, "streamcheck sat: want exactly one FILE.cnf, got %d\n\n", len(files))
		fs.Usage()
		return ExitError
	}
	if *timeout < 0 {
		fmt.Fprintf(stderr, "streamcheck sat: --timeout %v is negative\n", *timeout)
		return ExitError
	}
	// The timeout is wall clock from the start, parsing included, as SAT
	// competitions count it.
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}

	name := files[0]
	cnf, err := readCNF(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck sat: %v\n", err)
		return ExitError
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	fmt.Fprintf(out, "c streamcheck sat %s: %d variables, %d clauses, %d nodes, %d edges, read in %v\n",
		name, cnf.NumVars, len(cnf.Clauses), cnf.NumNodes, len(cnf.Edges), time.Since(start).Round(time.Microsecond))

	s := solver.New(solver.Options{Seed: *seed})
	_, ok, err := cnf.Load(s)
	if err != nil { // cannot happen for a parsed CNF, but say so if it does
		fmt.Fprintf(stderr, "streamcheck sat: %s: %v\n", name, err)
		return ExitError
	}
	st := solver.Unsat
	if ok && ctx.Err() == nil {
		st = s.Solve(ctx)
	} else if ok {
		st = solver.Unknown
	}
	stats := s.Stats()
	fmt.Fprintf(out, "c solved in %v: %d conflicts, %d decisions, %d propagations, %d restarts\n",
		time.Since(start).Round(time.Microsecond), stats.Conflicts, stats.Decisions, stats.Propagations, stats.Restarts)

	code := ExitUnknown
	switch st {
	case solver.Sat:
		// A wrong model must never be printed as an answer: check it with
		// the solver-independent Verify (linear in the formula).
		value := func(l int) bool { return s.Value(solver.LitFromDIMACS(l)) }
		if err := cnf.Verify(value); err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "streamcheck sat: %s: internal error: the solver's model is wrong: %v\n", name, err)
			return ExitError
		}
		out.WriteString("s SATISFIABLE\n")
		writeModel(out, cnf.NumVars, value)
		code = ExitSat
	case solver.Unsat:
		out.WriteString("s UNSATISFIABLE\n")
		code = ExitUnsat
	default:
		out.WriteString("s UNKNOWN\n")
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "streamcheck sat: write result: %v\n", err)
		return ExitError
	}
	return code
}

// parseArgs lets flags and the file come in any order (`sat x.cnf
// --timeout 1s` too), which package flag alone does not: it stops at the
// first non-flag. After "--" every word is a file.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(files, rest...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

// readCNF opens name ("-" for stdin), undoes gzip when the first two bytes
// are its magic number, and parses DIMACS.
func readCNF(name string, stdin io.Reader) (*solver.CNF, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	cnf, err := solver.ParseDIMACS(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cnf, nil
}

// maxLine bounds "v" lines: the competition format asks for lines a person
// (and old tools) can read.
const maxLine = 80

// writeModel prints the model as "v" lines of at most maxLine bytes, the
// last ending with the terminating 0.
func writeModel(w *bufio.Writer, numVars int, value func(int) bool) {
	line := make([]byte, 0, maxLine+16)
	line = append(line, 'v')
	add := func(lit int) {
		var num [24]byte
		tok := strconv.AppendInt(num[:0], int64(lit), 10)
		if len(line)+1+len(tok) > maxLine {
			line = append(line, '\n')
			w.Write(line)
			line = append(line[:0], 'v')
		}
		line = append(line, ' ')
		line = append(line, tok...)
	}
	for v := 1; v <= numVars; v++ {
		if value(v) {
			add(v)
		} else {
			add(-v)
		}
	}
	add(0)
	line = append(line, '\n')
	w.Write(line)
}

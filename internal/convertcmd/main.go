package convertcmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// Exit codes, as check's: 0 written, 2 bad usage or input.
const (
	exitOK    = 0
	exitError = 2
)

// Targets are the formats convert writes.
var Targets = []string{"native", "elle-edn", "dbcop", "text"}

// Main runs `streamcheck convert [--to FORMAT] IN OUT`. IN is a file, a
// directory (Cobra or Viper logs, or dbcop's history.bincode) or "-"; OUT a
// file, "-" (standard output) or, with --to dbcop, a directory to write
// history.bincode in.
func Main(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// -h prints the usage on stdout with exit 0, as every command's help
	// does; a mistake prints it on stderr with exit 2.
	var parseOut bytes.Buffer
	fs := flag.NewFlagSet("streamcheck convert", flag.ContinueOnError)
	fs.SetOutput(&parseOut)
	to := fs.String("to", "native", "output format: native, elle-edn, dbcop or text")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: streamcheck convert [--to native|elle-edn|dbcop|text] IN OUT\n\n"+
			"Reads IN in any format check reads (native, Elle EDN/JSON, a directory of\n"+
			"Cobra logs, dbcop's history.bincode, PolySI/Plume text, AWDIT's test\n"+
			"format, Viper logs) and writes it to OUT (\"-\": standard output; with\n"+
			"--to dbcop a directory gets history.bincode). A target that cannot say\n"+
			"part of the history is an error naming the transaction.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	perr := fs.Parse(args)
	if errors.Is(perr, flag.ErrHelp) {
		stdout.Write(parseOut.Bytes())
		return 0
	}
	if perr == nil && fs.NArg() != 2 {
		fs.Usage()
		perr = errors.New("want IN and OUT")
	}
	if perr != nil {
		stderr.Write(parseOut.Bytes())
		return exitError
	}
	in, out := fs.Arg(0), fs.Arg(1)
	var (
		h   *history.History
		f   ingest.Format
		st  ingest.Stats
		err error
	)
	if in == "-" {
		h, f, st, err = ingest.ReadHistoryStats(stdin, "-")
	} else {
		h, f, st, err = ingest.ReadFileStats(in)
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck convert: %v\n", err)
		return exitError
	}
	b, err := Encode(h, *to)
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck convert: %v\n", err)
		return exitError
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() && *to == "dbcop" {
		// dbcop, AWDIT and PolySI's corpora keep a history as
		// DIR/history.bincode.
		out = filepath.Join(out, "history.bincode")
	}
	if out == "-" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck convert: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stderr, "streamcheck convert: %s -> %s: %d transactions", f, *to, len(h.Txns))
	if st.SetAside > 0 {
		fmt.Fprintf(stderr, " (%d records set aside)", st.SetAside)
	}
	fmt.Fprintln(stderr)
	return exitOK
}

// Encode writes h in the target format.
func Encode(h *history.History, to string) ([]byte, error) {
	switch to {
	case "native":
		return ingest.AppendNativeHistory(nil, h), nil
	case "elle-edn":
		return ingest.AppendElleEDN(nil, h)
	case "dbcop":
		return ingest.AppendDBCop(nil, h)
	case "text":
		return ingest.AppendText(nil, h)
	}
	return nil, fmt.Errorf("unknown output format %q (want native, elle-edn, dbcop or text)", to)
}

package gencmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // output could not be written
	exitUsage = 2 // bad flags
)

// options is what the flags say besides the generator's Config.
type options struct {
	stamps   bool   // --stamps: with database facts (stamps.go)
	out      string // "" or "-": stdout
	manifest string // "": stderr
}

// parse turns the arguments into a Config: the --workload preset, then
// every flag given explicitly on top of it, so that "--workload blindw-rh
// --keys 100" changes only the keys.
func parse(args []string, stderr io.Writer) (gen.Config, options, error) {
	fs := flag.NewFlagSet("streamcheck gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: streamcheck gen [flags] > history.jsonl\n\n"+
			"Writes a synthetic "+history.StrictSerializable.String()+" history as native JSON Lines, in\n"+
			"end-time order, with the anomalies of --inject added; the injected\n"+
			"anomalies (type, Adya class, core transaction ids) go to stderr or\n"+
			"--manifest as JSON. Flags not given take the --workload preset's values\n"+
			"(presets: 32 sessions, 8 ops, 5000 keys, concurrency 16).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var (
		o                                      options
		workload, keyDist, inject, validAt     string
		txns, sessions, keys, ops, maxList     int
		read, blind, dup, unknown, abort, list float64
		concurrency, zipfS, injectRate         float64
		latency, staleGap                      time.Duration
		start                                  int64
		seed                                   uint64
	)
	fs.StringVar(&workload, "workload", "mixed", "preset: "+strings.Join(gen.PresetNames(), ", "))
	fs.IntVar(&txns, "txns", gen.DefaultTxns, "number of base transactions (injections add a few)")
	fs.IntVar(&sessions, "sessions", gen.DefaultSessions, "client sessions")
	fs.IntVar(&keys, "keys", gen.DefaultKeys, "key slots")
	fs.IntVar(&ops, "ops", gen.DefaultOpsPerTxn, "logical operations per transaction")
	fs.Float64Var(&read, "read-ratio", 0, "fraction of reads (blindw: of read-only transactions) (default from --workload)")
	fs.Float64Var(&blind, "blind-write-ratio", 0, "fraction of register writes without a read of the key first (default from --workload)")
	fs.Float64Var(&dup, "dup-ratio", 0, "fraction of register writes repeating an earlier value of the key (default from --workload)")
	fs.Float64Var(&unknown, "unknown-ratio", 0, "fraction of transactions with unknown outcome (default from --workload)")
	fs.Float64Var(&abort, "abort-ratio", 0, "fraction of aborted transactions (default from --workload)")
	fs.Float64Var(&list, "list-ratio", 0, "fraction of key slots that are append-only lists (default from --workload)")
	fs.Float64Var(&concurrency, "concurrency", gen.DefaultConcurrency, "mean number of transactions overlapping each one (at most 2*(sessions-1))")
	fs.StringVar(&keyDist, "key-dist", "uniform", "key distribution: uniform or zipf")
	fs.Float64Var(&zipfS, "zipf-s", gen.DefaultZipfS, "Zipf exponent (> 1)")
	fs.DurationVar(&latency, "latency", gen.DefaultLatency, "mean transaction duration")
	fs.DurationVar(&staleGap, "stale-gap", gen.DefaultStaleGap, "real-time gap of an injected stale read (seen by checkers with skew <= gap/2)")
	fs.IntVar(&maxList, "max-list-len", gen.DefaultMaxListLen, "appends after which a list key is retired for a fresh one")
	fs.Int64Var(&start, "start", gen.DefaultStartTime, "first start timestamp, ns since the epoch")
	fs.StringVar(&inject, "inject", "", "comma-separated anomaly types to inject once each: "+strings.Join(gen.InjectTypes(), ", ")+" (stale-read = G-single-realtime)")
	fs.Float64Var(&injectRate, "inject-rate", 0, "inject before each transaction with this probability, cycling through --inject (all types when empty)")
	fs.StringVar(&validAt, "valid-at", "", "add shapes valid at `LEVEL` but not at any stronger level: "+strings.Join(history.LevelNames(), ", ")+" (one per 1000 transactions; the manifest marks them valid_at)")
	fs.Uint64Var(&seed, "seed", 0, "random seed; the same flags and seed give the same bytes")
	fs.StringVar(&o.out, "o", "", "write the history to `FILE` instead of stdout")
	fs.BoolVar(&o.stamps, "stamps", false, "write the store's commit_ts and start_ts with each transaction (docs/SEMANTICS.md §10)")
	fs.StringVar(&o.manifest, "manifest", "", "write the injected anomalies as JSON to `FILE` instead of stderr")
	if err := fs.Parse(args); err != nil {
		return gen.Config{}, o, err
	}
	if fs.NArg() > 0 {
		return gen.Config{}, o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := gen.Preset(workload)
	if err != nil {
		return cfg, o, err
	}
	var errs []error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "txns":
			cfg.Txns = txns
		case "sessions":
			cfg.Sessions = sessions
			if !set(fs, "concurrency") && cfg.Concurrency > 2*float64(sessions-1) {
				// The preset's concurrency may not fit fewer sessions.
				cfg.Concurrency = 0
			}
		case "keys":
			cfg.Keys = keys
		case "ops":
			cfg.OpsPerTxn = ops
		case "read-ratio":
			cfg.ReadRatio = read
		case "blind-write-ratio":
			cfg.BlindWriteRatio = blind
		case "dup-ratio":
			cfg.DupValueRatio = dup
		case "unknown-ratio":
			cfg.UnknownRatio = unknown
		case "abort-ratio":
			cfg.AbortRatio = abort
		case "list-ratio":
			cfg.ListRatio = list
		case "concurrency":
			cfg.Concurrency = concurrency
		case "key-dist":
			d, err := gen.ParseKeyDist(keyDist)
			errs = append(errs, err)
			cfg.KeyDist = d
		case "zipf-s":
			cfg.ZipfS = zipfS
		case "latency":
			cfg.Latency = int64(latency)
		case "stale-gap":
			cfg.StaleGap = int64(staleGap)
		case "valid-at":
			cfg.ValidAt = validAt
		case "max-list-len":
			cfg.MaxListLen = maxList
		case "start":
			cfg.StartTime = start
		case "inject":
			for _, t := range strings.Split(inject, ",") {
				if t = strings.TrimSpace(t); t != "" {
					cfg.Inject = append(cfg.Inject, t)
				}
			}
		case "inject-rate":
			cfg.InjectRate = injectRate
		case "seed":
			cfg.Seed = seed
		}
	})
	return cfg, o, errors.Join(errs...)
}

func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// Main runs `streamcheck gen`: args are the arguments after "gen".
func Main(args []string, stdout, stderr io.Writer) int {
	// -h prints the usage on stdout, as every command's help does; a bad
	// flag prints it on stderr with the error.
	var parseOut bytes.Buffer
	cfg, o, err := parse(args, &parseOut)
	if errors.Is(err, flag.ErrHelp) {
		stdout.Write(parseOut.Bytes())
		return exitOK
	}
	stderr.Write(parseOut.Bytes())
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck gen: %v\n", err)
		return exitUsage
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "streamcheck gen: %v\n", err)
		return exitUsage
	}
	out := stdout
	var file *os.File
	if o.out != "" && o.out != "-" {
		if file, err = os.Create(o.out); err != nil {
			fmt.Fprintf(stderr, "streamcheck gen: %v\n", err)
			return exitError
		}
		out = file
	}
	write := write
	if o.stamps {
		write = writeStamps
	}
	inj, err := write(cfg, out)
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck gen: write history: %v\n", err)
		return exitError
	}
	if len(cfg.Inject) == 0 && cfg.InjectRate == 0 && o.manifest == "" {
		return exitOK
	}
	if inj == nil {
		inj = []gen.Injected{}
	}
	manifest, _ := json.MarshalIndent(inj, "", "  ")
	manifest = append(manifest, '\n')
	if o.manifest == "" {
		_, err = stderr.Write(manifest)
	} else {
		err = os.WriteFile(o.manifest, manifest, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamcheck gen: write manifest: %v\n", err)
		return exitError
	}
	return exitOK
}

// write streams the history as native JSON Lines.
func write(cfg gen.Config, out io.Writer) ([]gen.Injected, error) {
	w := bufio.NewWriterSize(out, 1<<20)
	var line []byte
	inj, err := gen.GenerateStream(cfg, func(t history.Txn) error {
		line = ingest.AppendNative(line[:0], &t)
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	})
	if err != nil {
		return nil, err
	}
	return inj, w.Flush()
}

package gen

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Workload is the shape of the generated transactions.
type Workload uint8

const (
	// Mixed: every transaction draws each logical operation independently:
	// a read with probability ReadRatio, else a write (register) or an
	// append (list); a register write reads its key first unless it is
	// blind (BlindWriteRatio).
	Mixed Workload = iota
	// BlindW: the papers' BlindW benchmark (Vbox §4.2, Viper §7): every
	// transaction is read-only (probability ReadRatio) or write-only, and
	// every write is blind.
	BlindW
)

func (w Workload) String() string {
	switch w {
	case Mixed:
		return "mixed"
	case BlindW:
		return "blindw"
	}
	return fmt.Sprintf("Workload(%d)", uint8(w))
}

// KeyDist is how operations pick their key.
type KeyDist uint8

const (
	// Uniform picks every key slot with equal probability.
	Uniform KeyDist = iota
	// Zipf picks key slot k with probability proportional to 1/(1+k)^ZipfS.
	Zipf
)

func (d KeyDist) String() string {
	switch d {
	case Uniform:
		return "uniform"
	case Zipf:
		return "zipf"
	}
	return fmt.Sprintf("KeyDist(%d)", uint8(d))
}

// ParseKeyDist accepts "uniform" or "zipf".
func ParseKeyDist(s string) (KeyDist, error) {
	switch strings.ToLower(s) {
	case "uniform":
		return Uniform, nil
	case "zipf":
		return Zipf, nil
	}
	return 0, fmt.Errorf("gen: unknown key distribution %q (want uniform or zipf)", s)
}

// Defaults applied to zero-valued integer knobs. Ratios have no defaults:
// zero means zero, and Preset supplies realistic ones.
const (
	DefaultTxns        = 10000
	DefaultSessions    = 32
	DefaultKeys        = 5000
	DefaultOpsPerTxn   = 8
	DefaultConcurrency = 16
	DefaultLatency     = 1_000_000               // 1 ms mean transaction duration
	DefaultStartTime   = 1_700_000_000_000000000 // ns since the epoch, November 2023
	DefaultMaxListLen  = 32
	DefaultStaleGap    = 100_000_000 // 100 ms between a write and its stale reader
	DefaultZipfS       = 1.1
)

// Config are the generator's knobs. The zero value of an integer knob
// selects its default; a ratio's zero value means zero (use Preset for a
// realistic mix). The same Config and Seed always give the same history.
type Config struct {
	Workload Workload
	// Txns is the number of base transactions; injected anomalies add a
	// few more.
	Txns int
	// Sessions is the number of clients running transactions back to back.
	Sessions int
	// Keys is the number of key slots. A list slot retires its key after
	// MaxListLen visible appends and continues under a fresh key, so the
	// number of distinct list keys grows with the history.
	Keys int
	// OpsPerTxn is the number of logical operations per transaction. A
	// read-modify-write counts once but produces two micro-operations.
	OpsPerTxn int

	// ReadRatio: Mixed, the fraction of logical operations that are reads;
	// BlindW, the fraction of read-only transactions.
	ReadRatio float64
	// BlindWriteRatio is the fraction of register writes not immediately
	// preceded by a read of the same key in the same transaction (Mixed;
	// BlindW writes are all blind).
	BlindWriteRatio float64
	// DupValueRatio is the fraction of register writes that write a value
	// another transaction already wrote to that key. List appends stay
	// unique.
	DupValueRatio float64
	// UnknownRatio is the fraction of transactions whose outcome the client
	// never learns; half of them take effect.
	UnknownRatio float64
	// AbortRatio is the fraction of aborted transactions (no effects).
	AbortRatio float64
	// ListRatio is the fraction of key slots that are append-only lists.
	ListRatio float64

	KeyDist KeyDist
	// ZipfS is the Zipf exponent (> 1); 0 selects DefaultZipfS.
	ZipfS float64

	// Concurrency is the mean number of other transactions whose client
	// interval overlaps a transaction's. 0 selects min(16, Sessions-1). It
	// must not exceed 2*(Sessions-1), the overlap with no think time.
	Concurrency float64
	// Latency is the mean transaction duration in ns (0: 1 ms).
	Latency int64
	// StartTime is the first start timestamp in ns (0: ~1.7e18).
	StartTime int64
	// MaxListLen is the number of visible appends after which a list key
	// is retired (0: 32), which bounds list reads.
	MaxListLen int
	// StaleGap is the real-time gap between a stale read's writer and its
	// reader, in ns (0: 100 ms). A checker with skew bound Δ sees it iff
	// StaleGap >= 2Δ.
	StaleGap int64

	// Inject names anomaly types (InjectTypes) to inject. With InjectRate
	// 0 each entry is injected once, spread evenly over the history.
	Inject []string
	// InjectRate, when positive, injects before each base transaction with
	// this probability, cycling through Inject (all types when empty).
	InjectRate float64

	// ValidAt, a level's name from the registry (history.Levels), adds
	// shapes valid at that level but not at any checked level stronger
	// (validat.go: one per 1000 base transactions, at least one), so that
	// differential tests exercise anomalies the level allows. Empty, or
	// the strongest level: the base alone, valid at every level.
	ValidAt string

	Seed uint64

	_ struct{}
}

// presets: 32 sessions, 8 operations, 5K keys, as in the papers' setups
// (Viper §7: 24 clients, 8 operations; Vbox §4.2: BlindW on 10K rows).
var presets = map[string]func() Config{
	"mixed": func() Config {
		c := base()
		c.ReadRatio = 0.5
		c.BlindWriteRatio = 0.5
		c.DupValueRatio = 0.05
		c.UnknownRatio = 0.01
		c.AbortRatio = 0.02
		c.ListRatio = 0.2
		return c
	},
	// Vbox §4.2: BlindW-RH is 80% reads, BlindW-WH 20%; Viper §7's
	// BlindW-RW is 50% read-only and 50% write-only transactions.
	"blindw-rh": func() Config { c := base(); c.Workload = BlindW; c.ReadRatio = 0.8; return c },
	"blindw-rw": func() Config { c := base(); c.Workload = BlindW; c.ReadRatio = 0.5; return c },
	"blindw-wh": func() Config { c := base(); c.Workload = BlindW; c.ReadRatio = 0.2; return c },
}

func base() Config {
	return Config{
		Txns:        DefaultTxns,
		Sessions:    DefaultSessions,
		Keys:        DefaultKeys,
		OpsPerTxn:   DefaultOpsPerTxn,
		Concurrency: DefaultConcurrency,
	}
}

// PresetNames lists the names Preset accepts.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a named workload: "mixed" (registers and lists, read-
// modify-writes, duplicates, unknown and aborted outcomes) or the papers'
// "blindw-rh", "blindw-rw", "blindw-wh". All use 32 sessions, 8 operations
// per transaction, 5K keys and a concurrency of 16.
func Preset(name string) (Config, error) {
	f, ok := presets[strings.ToLower(name)]
	if !ok {
		return Config{}, fmt.Errorf("gen: unknown workload %q (want one of %s)", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}

// Validate reports every knob out of range (after defaults), as
// GenerateStream would before emitting anything.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults fills zero integer knobs and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Txns == 0 {
		c.Txns = DefaultTxns
	}
	if c.Sessions == 0 {
		c.Sessions = DefaultSessions
	}
	if c.Keys == 0 {
		c.Keys = DefaultKeys
	}
	if c.OpsPerTxn == 0 {
		c.OpsPerTxn = DefaultOpsPerTxn
	}
	if c.Concurrency == 0 {
		c.Concurrency = math.Min(DefaultConcurrency, float64(c.Sessions-1))
	}
	if c.Latency == 0 {
		c.Latency = DefaultLatency
	}
	if c.StartTime == 0 {
		c.StartTime = DefaultStartTime
	}
	if c.MaxListLen == 0 {
		c.MaxListLen = DefaultMaxListLen
	}
	if c.StaleGap == 0 {
		c.StaleGap = DefaultStaleGap
	}
	if c.ZipfS == 0 {
		c.ZipfS = DefaultZipfS
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("gen: "+format, args...)) }
	if c.Txns < 0 {
		bad("txns %d < 0", c.Txns)
	}
	if c.Sessions < 1 {
		bad("sessions %d < 1", c.Sessions)
	}
	if c.Keys < 1 {
		bad("keys %d < 1", c.Keys)
	}
	if c.OpsPerTxn < 1 {
		bad("ops per txn %d < 1", c.OpsPerTxn)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"read ratio", c.ReadRatio}, {"blind write ratio", c.BlindWriteRatio},
		{"dup value ratio", c.DupValueRatio}, {"unknown ratio", c.UnknownRatio},
		{"abort ratio", c.AbortRatio}, {"list ratio", c.ListRatio}, {"inject rate", c.InjectRate},
	} {
		if !(r.v >= 0 && r.v <= 1) {
			bad("%s %v outside [0, 1]", r.name, r.v)
		}
	}
	if c.UnknownRatio+c.AbortRatio > 1 {
		bad("unknown ratio + abort ratio = %v > 1", c.UnknownRatio+c.AbortRatio)
	}
	if maxC := 2 * float64(c.Sessions-1); !(c.Concurrency >= 0 && c.Concurrency <= maxC) {
		bad("concurrency %v outside [0, %v]: %d sessions overlap at most 2*(sessions-1) on average; add sessions", c.Concurrency, maxC, c.Sessions)
	}
	if c.Sessions > 1 && c.Concurrency == 0 {
		bad("concurrency 0 needs a single session")
	}
	if c.Latency < 2 {
		bad("latency %d < 2 ns", c.Latency)
	}
	if c.StartTime < 0 || c.StartTime > math.MaxInt64/2 {
		bad("start time %d out of range", c.StartTime)
	}
	if c.MaxListLen < 1 {
		bad("max list length %d < 1", c.MaxListLen)
	}
	if c.StaleGap < 1 {
		bad("stale gap %d < 1", c.StaleGap)
	}
	if c.KeyDist == Zipf && !(c.ZipfS > 1) {
		bad("zipf exponent %v must be > 1", c.ZipfS)
	}
	if c.KeyDist > Zipf {
		bad("unknown key distribution %v", c.KeyDist)
	}
	if c.Workload > BlindW {
		bad("unknown workload %v", c.Workload)
	}
	if err := validateValidAt(c.ValidAt); err != nil {
		bad("%v", err)
	}
	for _, name := range c.Inject {
		if _, ok := canonicalType(name); !ok {
			bad("unknown anomaly type %q (want one of %s)", name, strings.Join(InjectTypes(), ", "))
		}
	}
	return errors.Join(errs...)
}

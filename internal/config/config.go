// Package config owns the YAML configuration of `streamcheck run`: the
// option tree with its defaults (Default), strict decoding (Load: an
// unknown key is an error that names it and its line), value parsing
// (durations, byte sizes) and validation. Command-line flags override
// the file; internal/runcmd maps each flag onto a field with Set.
// config.example.yaml at the repository root documents every option with
// its default and is held to Default by a test.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/streamcheck/streamcheck/history"
)

// Config is the whole option tree.
type Config struct {
	// Source: "kafka", or a file path to follow, or "-" for stdin.
	Source     string     `yaml:"source"`
	Kafka      Kafka      `yaml:"kafka"`
	Check      Check      `yaml:"check"`
	State      State      `yaml:"state"`
	DeadLetter DeadLetter `yaml:"dead_letter"`
	Alerts     Alerts     `yaml:"alerts"`
	Status     Status     `yaml:"status"`
	HTTP       HTTP       `yaml:"http"`
	// MemoryLimit is the Go runtime's soft memory limit for the run
	// (runtime/debug.SetMemoryLimit), so that the collector's headroom
	// does not grow the process with a flat live heap; 0 leaves the
	// runtime's (none), and GOMEMLIMIT in the environment wins over it.
	// It changes no verdict. internal/runcmd/storm29_memlimit.go.
	MemoryLimit Size `yaml:"memory_limit"`
}

// HTTP is the one HTTP server: /metrics, /healthz, /readyz,
// /api/anomalies and the status page.
type HTTP struct {
	// Addr is host:port to listen on; empty turns the server off. The
	// default is loopback only, since the page shows transaction contents.
	Addr string `yaml:"addr"`
	// Pprof serves Go's profiles under /debug/pprof/ on it. Off by
	// default: a profile or trace runs as long as the caller asks.
	Pprof bool `yaml:"pprof"`
}

// Kafka is the Kafka source.
type Kafka struct {
	Brokers []string `yaml:"brokers"`
	Topic   string   `yaml:"topic"`
	// Group is the consumer group offsets are committed to after each
	// durable checkpoint (for lag tools); the checkpoint's offsets are the
	// ones of record.
	Group    string `yaml:"group"`
	ClientID string `yaml:"client_id"`
	// Start is where a fresh state directory starts: earliest or latest.
	Start string `yaml:"start"`
	// MinFetchBytes, MaxFetchBytes, MaxWait shape fetches (kafka-go's
	// MinBytes, MaxBytes, MaxWait); they never change what is checked.
	MinFetchBytes Size     `yaml:"min_fetch_bytes"`
	MaxFetchBytes Size     `yaml:"max_fetch_bytes"`
	MaxWait       Duration `yaml:"max_wait"`
	// MaxEventBytes: a larger message is dead-lettered as oversized; it
	// bounds the lines of stdin and of a followed file too.
	MaxEventBytes Size `yaml:"max_event_bytes"`
	// StopAtEnd: exit once every partition has been read up to the end
	// it had at start, like stdin's end of input (backfills, tests).
	StopAtEnd bool `yaml:"stop_at_end"`
	// RetryBackoff bounds the reconnect backoff while a broker is
	// unreachable.
	RetryBackoffMin Duration `yaml:"retry_backoff_min"`
	RetryBackoffMax Duration `yaml:"retry_backoff_max"`
	TLS             TLS      `yaml:"tls"`
	SASL            SASL     `yaml:"sasl"`
}

// TLS configures the broker connection's TLS.
type TLS struct {
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// SASL configures broker authentication.
type SASL struct {
	// Mechanism: "" (none), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  string `yaml:"password"`
	// PasswordEnv names an environment variable holding the password, so
	// the file need not.
	PasswordEnv string `yaml:"password_env"`
}

// Check is what is checked and how the window behaves.
type Check struct {
	Level        string   `yaml:"level"`
	Skew         Duration `yaml:"skew"`
	Lateness     Duration `yaml:"lateness"`
	InDoubt      Duration `yaml:"indoubt"` // negative: none (+∞)
	InitialState string   `yaml:"initial_state"`
	// IdleTimeout: event time a partition may stay silent before it stops
	// holding the watermark back; 0 is off.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// IdleRelease: wall-clock time stdin or a followed file may stay
	// quiet before the watermark moves past the last event's start, so
	// that the last transactions are checked; 0 is off. Exact when no
	// event starting before that arrives later (one that does is
	// dead-lettered as late): choose it above the lateness.
	IdleRelease Duration `yaml:"idle_release"`
	// MaxAhead: an event whose start lies more than this beyond its
	// partition's latest accepted start (event time), or beyond the wall
	// clock when its timestamps are wall-clock nanoseconds, is
	// dead-lettered as future instead of moving the watermark
	// (window.Config.MaxAhead); 0 is off.
	MaxAhead Duration `yaml:"max_ahead"`
	// Tick: the engine steps each time the watermark crosses a multiple
	// of Tick (event time), so steps do not depend on arrival timing.
	Tick Duration `yaml:"tick"`
	// Evict turns on the evicting engine (online.OnlineConfig.Evict),
	// the default: without it every step re-checks the whole released
	// history, which a days-long stream cannot afford.
	Evict bool `yaml:"evict"`
	// MaxPinned caps the evicting engine's pinned transactions; beyond it
	// the oldest are set aside unchecked and the check is inexact
	// (online.OnlineConfig.MaxPinned). 0 is no cap.
	MaxPinned int `yaml:"max_pinned"`
	// Closure answers the evicting engine's "is this order decided"
	// questions with the compact transitive closure (closure/) before any
	// solver probe, the default; false asks every one with a probe
	// (online.OnlineConfig.NoClosure). The verdicts are the same either
	// way (docs/SEMANTICS.md §5 "The closure switch"); the switch exists
	// to measure the closure's effect on a user's own stream.
	Closure bool `yaml:"closure"`
	// Stamps uses the events' commit_ts and start_ts (stamponline,
	// docs/SEMANTICS.md §10 "Online with facts").
	Stamps bool `yaml:"stamps"`
}

// State is the checkpoint store.
type State struct {
	// Dir is the Pebble directory; empty runs without checkpoints.
	Dir string `yaml:"dir"`
	// CheckpointEvery (messages) and CheckpointInterval (wall clock):
	// whichever comes first; 0 turns that trigger off.
	CheckpointEvery    int       `yaml:"checkpoint_every"`
	CheckpointInterval Duration  `yaml:"checkpoint_interval"`
	Retention          Retention `yaml:"retention"`
}

// Retention bounds the bodies of evicted transactions kept in the state
// directory (event-time age and total bytes; 0 is unbounded).
type Retention struct {
	MaxAge   Duration `yaml:"max_age"`
	MaxBytes Size     `yaml:"max_bytes"`
}

// DeadLetter says where dead letters go (both, either or neither).
type DeadLetter struct {
	File  string `yaml:"file"`
	Topic string `yaml:"topic"`
}

// Alerts says where alerts go: every sink configured gets every alert,
// each with its own retry (alerts.Dispatcher).
type Alerts struct {
	// Stdout writes one JSON line per alert to stdout unless File is set
	// (File replaces stdout, as --alerts always did).
	Stdout bool `yaml:"stdout"`
	// File appends the same JSON lines to a file.
	File         string       `yaml:"file"`
	Alertmanager Alertmanager `yaml:"alertmanager"`
	Webhooks     []Webhook    `yaml:"webhooks"`
	Kafka        AlertKafka   `yaml:"kafka"`
	// BackoffMin and BackoffMax bound each sink's retry backoff.
	BackoffMin Duration `yaml:"backoff_min"`
	BackoffMax Duration `yaml:"backoff_max"`
	// Stream names the stream in every alert id (incremental/alertid.go).
	// Empty (the default), an id names the anomaly by its transactions'
	// content and class alone, so a replay of the same events from a
	// file, stdin or Kafka gives the same ids; streams that share sinks
	// and whose transactions could coincide set distinct names. Changing
	// it changes every later id.
	Stream string `yaml:"stream"`
}

// Alertmanager is the Alertmanager sink; empty URL is off.
type Alertmanager struct {
	URL string `yaml:"url"`
	// Hold: endsAt = startsAt + Hold (an anomaly never resolves itself).
	Hold Duration `yaml:"hold"`
	// StatusURL is the status page's external base URL, for each alert's
	// generatorURL; empty: http://<http.addr> when the server is on.
	StatusURL string `yaml:"status_url"`
}

// Webhook is one generic webhook sink.
type Webhook struct {
	URL string `yaml:"url"`
	// SecretEnv names the environment variable holding the HMAC-SHA256
	// secret (the file never holds it); empty: unsigned.
	SecretEnv string            `yaml:"secret_env"`
	Headers   map[string]string `yaml:"headers"`
}

// AlertKafka is the Kafka alert sink (key = alert id); empty Topic is off.
type AlertKafka struct {
	Brokers []string `yaml:"brokers"`
	Topic   string   `yaml:"topic"`
}

// Status is the periodic status line on stderr.
type Status struct {
	Interval Duration `yaml:"interval"`
	// Poll: how often a followed file is polled at its end.
	Poll Duration `yaml:"poll"`
}

// Default returns every option at its default.
func Default() *Config {
	c := &Config{
		Source: "-",
		Kafka: Kafka{
			Brokers:         []string{"localhost:9092"},
			Group:           "streamcheck",
			ClientID:        "streamcheck",
			Start:           "earliest",
			MinFetchBytes:   1,
			MaxFetchBytes:   10 << 20,
			MaxWait:         Duration(500 * time.Millisecond),
			MaxEventBytes:   1 << 20,
			RetryBackoffMin: Duration(100 * time.Millisecond),
			RetryBackoffMax: Duration(10 * time.Second),
		},
		Check: Check{
			Level:        history.StrictSerializable.String(),
			Lateness:     Duration(10 * time.Second),
			InDoubt:      Duration(time.Minute),
			InitialState: "unknown",
			// A Kafka partition nobody produces to would otherwise hold
			// the watermark at -∞ for ever.
			IdleTimeout: Duration(time.Minute),
			// Three times the default lateness: an event that keeps the
			// lateness promise has arrived by then.
			IdleRelease: Duration(30 * time.Second),
			// Far beyond any lateness, far below the day a wrong clock
			// is typically off by (issue 20 item 4).
			MaxAhead: Duration(time.Hour),
			Tick:     Duration(100 * time.Millisecond),
			Evict:    true,
			Closure:  true,
		},
		State: State{
			CheckpointEvery:    100000,
			CheckpointInterval: Duration(10 * time.Second),
		},
		Status: Status{Interval: Duration(10 * time.Second), Poll: Duration(200 * time.Millisecond)},
		Alerts: Alerts{
			Stdout:       true,
			Alertmanager: Alertmanager{Hold: Duration(24 * time.Hour)},
			// Empty, not nil, as the example file decodes them.
			Webhooks:   []Webhook{},
			Kafka:      AlertKafka{Brokers: []string{}},
			BackoffMin: Duration(200 * time.Millisecond),
			BackoffMax: Duration(time.Minute),
		},
		HTTP: HTTP{Addr: "127.0.0.1:9479"},
		// The bound on a daemon's memory (issue 22).
		MemoryLimit: 256 << 20,
	}
	c.State.Retention.MaxAge = Duration(24 * time.Hour)
	c.State.Retention.MaxBytes = 1 << 30
	return c
}

// Load reads a YAML file over the defaults. An unknown key is an error
// naming it and its line.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes YAML over the defaults.
func Parse(b []byte) (*Config, error) {
	c := Default()
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, cleanYAMLError(err)
	}
	return c, c.Validate()
}

// cleanYAMLError keeps yaml.v3's line numbers and key names but drops the
// Go type names, which mean nothing to the reader of a config file.
func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if j := strings.Index(m, " not found in type config."); j >= 0 {
			typ := m[j+len(" not found in type config."):]
			m = m[:j] + " is not an option " + sections[typ]
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}

// sections names each option struct as the file spells its place.
var sections = map[string]string{
	"Config": "at the top level", "Kafka": "in kafka", "TLS": "in kafka.tls", "SASL": "in kafka.sasl",
	"Check": "in check", "State": "in state", "Retention": "in state.retention",
	"DeadLetter": "in dead_letter", "Alerts": "in alerts", "Status": "in status",
	"HTTP": "in http", "Alertmanager": "in alerts.alertmanager", "Webhook": "in alerts.webhooks",
	"AlertKafka": "in alerts.kafka",
}

// Validate reports the first option out of range, naming it.
func (c *Config) Validate() error {
	switch {
	case c.Source == "":
		return errors.New("source: empty (kafka, a file path, or - for stdin)")
	case c.MemoryLimit < 0:
		return errors.New("memory_limit: negative")
	case c.Check.Lateness < 0:
		return errors.New("check.lateness: negative")
	case c.Check.Skew < 0:
		return errors.New("check.skew: negative")
	case c.Check.IdleTimeout < 0:
		return errors.New("check.idle_timeout: negative")
	case c.Check.IdleRelease < 0:
		return errors.New("check.idle_release: negative")
	case c.Check.MaxAhead < 0:
		return errors.New("check.max_ahead: negative")
	case c.Check.Tick <= 0:
		return errors.New("check.tick: must be positive")
	case c.State.CheckpointEvery < 0:
		return errors.New("state.checkpoint_every: negative")
	case c.State.CheckpointInterval < 0:
		return errors.New("state.checkpoint_interval: negative")
	case c.State.Retention.MaxAge < 0 || c.State.Retention.MaxBytes < 0:
		return errors.New("state.retention: negative bound")
	case c.Status.Interval < 0 || c.Status.Poll <= 0:
		return errors.New("status: interval must be >= 0 and poll > 0")
	case c.Alerts.BackoffMin <= 0 || c.Alerts.BackoffMax < c.Alerts.BackoffMin:
		return errors.New("alerts.backoff_min/max: want 0 < min <= max")
	case c.Alerts.Alertmanager.URL != "" && c.Alerts.Alertmanager.Hold <= 0:
		return errors.New("alerts.alertmanager.hold: must be positive")
	case c.Alerts.Kafka.Topic != "" && len(c.Alerts.Kafka.Brokers) == 0 && c.Source != "kafka":
		return errors.New("alerts.kafka.brokers: none given (and the source is not kafka, whose brokers it would use)")
	}
	for i, w := range c.Alerts.Webhooks {
		if w.URL == "" {
			return fmt.Errorf("alerts.webhooks[%d].url: empty", i)
		}
	}
	if c.Source == "kafka" {
		k := &c.Kafka
		switch {
		case len(k.Brokers) == 0:
			return errors.New("kafka.brokers: none given")
		case k.Topic == "":
			return errors.New("kafka.topic: empty")
		case k.Start != "earliest" && k.Start != "latest":
			return fmt.Errorf("kafka.start: %q (want earliest or latest)", k.Start)
		case k.MinFetchBytes < 1 || k.MaxFetchBytes < k.MinFetchBytes:
			return errors.New("kafka.min_fetch_bytes/max_fetch_bytes: want 1 <= min <= max")
		case k.MaxEventBytes < 1:
			return errors.New("kafka.max_event_bytes: must be positive")
		case k.RetryBackoffMin <= 0 || k.RetryBackoffMax < k.RetryBackoffMin:
			return errors.New("kafka.retry_backoff_min/max: want 0 < min <= max")
		}
		switch k.SASL.Mechanism {
		case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return fmt.Errorf("kafka.sasl.mechanism: %q (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", k.SASL.Mechanism)
		}
		if k.SASL.Mechanism != "" && k.SASL.Username == "" {
			return errors.New("kafka.sasl.username: empty")
		}
		if (k.TLS.CertFile == "") != (k.TLS.KeyFile == "") {
			return errors.New("kafka.tls: cert_file and key_file go together")
		}
	} else if c.DeadLetter.Topic != "" {
		return errors.New("dead_letter.topic: needs source kafka (its brokers)")
	}
	return nil
}

// PasswordValue returns the SASL password, from PasswordEnv if set.
func (s *SASL) PasswordValue() (string, error) {
	if s.PasswordEnv == "" {
		return s.Password, nil
	}
	v, ok := os.LookupEnv(s.PasswordEnv)
	if !ok {
		return "", fmt.Errorf("kafka.sasl.password_env: %s is not set", s.PasswordEnv)
	}
	return v, nil
}

// Duration is nanoseconds, written as a Go duration ("10s", "1m") or an
// integer count of nanoseconds; "none" (or a negative value) is +∞ where
// an option allows it.
type Duration int64

// ParseDuration parses what a Duration accepts.
func ParseDuration(s string) (Duration, error) {
	switch strings.TrimSpace(s) {
	case "none", "inf", "∞":
		return -1, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Duration(n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (like 10s, 1m, or integer nanoseconds)", s)
	}
	return Duration(d), nil
}

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = v
	return nil
}

func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

func (d Duration) String() string {
	if d < 0 {
		return "none"
	}
	return time.Duration(d).String()
}

// Size is a byte count, written as an integer or with a unit (KiB, MiB,
// GiB, KB, MB, GB).
type Size int64

// ParseSize parses what a Size accepts.
func ParseSize(s string) (Size, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a byte size (like 1048576 or 1MiB)", s)
	}
	return Size(n * mult), nil
}

func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*z = v
	return nil
}

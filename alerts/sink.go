package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/streamcheck/streamcheck/verdict"
)

// Sink delivers alerts to one destination. Deliver returns nil only once
// the destination has accepted the alert; any error makes the dispatcher
// retry the same alert later, so a sink must accept the same alert (same
// ID) more than once: delivery is at least once, and a sink deduplicates
// nothing except what the alert's ID gives the destination (Alertmanager
// merges alerts with equal labels, a webhook receiver or a Kafka consumer
// can key on the ID).
//
// Deliver must return when ctx is done. The dispatcher calls Deliver of one
// sink from one goroutine at a time; different sinks run concurrently.
type Sink interface {
	// Name identifies the sink in metrics labels, logs and the outbox; it
	// must be unique within a dispatcher and stable across restarts.
	Name() string
	Deliver(ctx context.Context, a verdict.Alert) error
}

// Local is implemented by a sink on this machine (a pipe or a file), whose
// delivery no remote peer can hold up: the dispatcher keeps every alert
// queued for it (no QueueLimit) and FlushLocal waits for it without a
// wall-clock bound, so that a run without a state directory, whose outbox
// dies with the process, writes every alert it raised however slowly a
// loaded machine schedules the writer.
type Local interface {
	Local() bool
}

// MarshalAlert is the one JSON encoding every sink sends and the outbox
// stores: one line of `streamcheck run`'s alert stream, the anomaly schema
// of `check --format json` plus the alert's fields, without a newline.
func MarshalAlert(a verdict.Alert) ([]byte, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("alerts: encode alert %q: %w", a.ID, err)
	}
	return b, nil
}

// JSONLines writes each alert as one JSON line, as `streamcheck run` always
// has: to stdout, or to a file opened for appending.
type JSONLines struct {
	name string
	mu   sync.Mutex
	w    io.Writer
	f    *os.File // non-nil when the sink opened the file itself
}

// NewJSONLines writes to w (for example os.Stdout) under the sink name
// name ("stdout" when empty). A write error is a delivery error: the alert
// is retried.
func NewJSONLines(name string, w io.Writer) *JSONLines {
	if name == "" {
		name = "stdout"
	}
	return &JSONLines{name: name, w: w}
}

// OpenJSONLinesFile appends to the file at path, creating it (mode 0644),
// and syncs it after every alert so that "delivered" means on disk. The
// sink's name is "file:" + path. Close closes the file.
func OpenJSONLinesFile(path string) (*JSONLines, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("alerts: open alert file: %w", err)
	}
	return &JSONLines{name: "file:" + path, w: f, f: f}, nil
}

// Name implements Sink.
func (s *JSONLines) Name() string { return s.name }

// Local implements Local: stdout or a file.
func (s *JSONLines) Local() bool { return true }

// Deliver implements Sink: one line, written with a single Write so that
// concurrent writers of the same file never interleave inside a line.
func (s *JSONLines) Deliver(ctx context.Context, a verdict.Alert) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := MarshalAlert(a)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("alerts: %s: write: %w", s.name, err)
	}
	if s.f != nil {
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("alerts: %s: sync: %w", s.name, err)
		}
	}
	return nil
}

// Close closes the file the sink opened; a no-op for NewJSONLines.
func (s *JSONLines) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	s.w = errWriter{}
	return err
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("sink closed") }

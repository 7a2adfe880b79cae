package record

import (
	"io"
	"os"
	"sync"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// Sink receives every finished transaction exactly once. Emit is called
// from whichever goroutine ended the transaction, so implementations must
// be safe for concurrent use. Emit owns t (and its Ops) after the call.
type Sink interface {
	Emit(t *history.Txn) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(t *history.Txn) error

// Emit calls f.
func (f SinkFunc) Emit(t *history.Txn) error { return f(t) }

// SliceSink keeps the transactions in memory, in emission order.
type SliceSink struct {
	mu   sync.Mutex
	txns []history.Txn
}

// Emit appends t.
func (s *SliceSink) Emit(t *history.Txn) error {
	s.mu.Lock()
	s.txns = append(s.txns, *t)
	s.mu.Unlock()
	return nil
}

// History returns a copy of what was emitted so far, as a history
// (emission order is end order, which the checkers do not rely on).
func (s *SliceSink) History() *history.History {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &history.History{Txns: append([]history.Txn(nil), s.txns...)}
}

// ChanSink sends each transaction on a channel, blocking while the channel
// is full: a consumer that falls behind slows the application down instead
// of losing transactions, since a history with holes raises false alarms.
type ChanSink chan<- history.Txn

// Emit sends t.
func (c ChanSink) Emit(t *history.Txn) error {
	c <- *t
	return nil
}

// JSONLinesSink writes native events (ingest.AppendNative), one per line,
// with one Write call per line, so that several processes appending to one
// file opened with O_APPEND do not interleave lines.
type JSONLinesSink struct {
	mu  sync.Mutex
	w   io.Writer
	c   io.Closer
	buf []byte
}

// NewJSONLines writes to w. Close does not close w.
func NewJSONLines(w io.Writer) *JSONLinesSink { return &JSONLinesSink{w: w} }

// CreateJSONLines opens path for appending (creating it with mode 0644)
// and writes to it; Close closes the file.
func CreateJSONLines(path string) (*JSONLinesSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &JSONLinesSink{w: f, c: f}, nil
}

// Emit writes t as one line.
func (s *JSONLinesSink) Emit(t *history.Txn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(ingest.AppendNative(s.buf[:0], t), '\n')
	_, err := s.w.Write(s.buf)
	return err
}

// Close closes the file opened by CreateJSONLines; for NewJSONLines it
// does nothing.
func (s *JSONLinesSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return nil
	}
	c := s.c
	s.c = nil
	return c.Close()
}

// KeyedSink sends each transaction as a native event keyed by its session,
// for message buses that keep one key's messages in order (a Kafka
// partition). write must be safe for concurrent use and may keep key and
// value: both are fresh for every call. With github.com/segmentio/kafka-go:
//
//	sink := record.KeyedSink(func(key, value []byte) error {
//		return w.WriteMessages(ctx, kafka.Message{Key: key, Value: value})
//	})
func KeyedSink(write func(key, value []byte) error) Sink {
	return SinkFunc(func(t *history.Txn) error {
		return write([]byte(t.Session), ingest.AppendNative(nil, t))
	})
}

// MultiSink emits to every sink in turn and returns the first error (it
// still emits to the others).
func MultiSink(sinks ...Sink) Sink {
	return multiSink(sinks)
}

// multiSink is MultiSink's sink; it is a FactsSink too (facts.go), so
// that database facts reach the sinks that keep them.
type multiSink []Sink

func (m multiSink) Emit(t *history.Txn) error { return m.EmitFacts(t, history.Facts{}) }

func (m multiSink) EmitFacts(t *history.Txn, f history.Facts) error {
	var first error
	for i, s := range m {
		c := t
		if i < len(m)-1 {
			// Each sink owns what it gets.
			cp := *t
			cp.Ops = append([]history.Op(nil), t.Ops...)
			c = &cp
		}
		var err error
		if fs, ok := s.(FactsSink); ok && f.Has != 0 {
			err = fs.EmitFacts(c, f)
		} else {
			err = s.Emit(c)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

package alerts

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamcheck/streamcheck/verdict"
)

// KafkaOptions configure a Kafka sink.
type KafkaOptions struct {
	Brokers []string
	Topic   string
	// Transport defaults to kafka.DefaultTransport (plain TCP); set it for
	// TLS or SASL.
	Transport kafka.RoundTripper
	// Name defaults to "kafka:" + Topic.
	Name string
	_    struct{}
}

// Kafka writes each alert's JSON to a topic with the alert id as the key,
// so that a compacted topic keeps one record per alert and every record of
// one alert lands in one partition. Each Deliver is one synchronous produce
// acknowledged by all in-sync replicas: nil means the broker has it.
type Kafka struct {
	name string
	w    *kafka.Writer
}

// NewKafka checks the options and returns the sink; it connects lazily, on
// the first Deliver.
func NewKafka(opts KafkaOptions) (*Kafka, error) {
	if len(opts.Brokers) == 0 {
		return nil, fmt.Errorf("alerts: kafka brokers: none given")
	}
	if opts.Topic == "" {
		return nil, fmt.Errorf("alerts: kafka topic: empty")
	}
	if opts.Name == "" {
		opts.Name = "kafka:" + opts.Topic
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(opts.Brokers...),
		Topic:        opts.Topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		// The dispatcher does the retrying, with its own backoff and
		// metrics; one attempt per Deliver keeps a broken broker visible.
		MaxAttempts: 1,
		// Alerts are rare and each must leave at once: no batching delay.
		BatchSize:    1,
		BatchTimeout: time.Millisecond,
		Transport:    opts.Transport,
	}
	return &Kafka{name: opts.Name, w: w}, nil
}

// Name implements Sink.
func (s *Kafka) Name() string { return s.name }

// Deliver implements Sink.
func (s *Kafka) Deliver(ctx context.Context, a verdict.Alert) error {
	b, err := MarshalAlert(a)
	if err != nil {
		return err
	}
	if err := s.w.WriteMessages(ctx, kafka.Message{Key: []byte(a.ID), Value: b}); err != nil {
		return fmt.Errorf("alerts: %s: %w", s.name, err)
	}
	return nil
}

// Close closes the writer's connections.
func (s *Kafka) Close() error { return s.w.Close() }

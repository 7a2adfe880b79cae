package ingest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/streamcheck/streamcheck/history"
)

// KafkaConfig says how to reach one topic. The Kafka source reads every
// partition of it (one checker must see the whole history: an anomaly
// spans partitions), each from an offset the caller chooses, without a
// consumer group: the offsets of record are the caller's checkpoint, and
// CommitOffsets copies them to a group for lag tools.
type KafkaConfig struct {
	Brokers  []string
	Topic    string
	ClientID string
	// TLS, if not nil, encrypts every broker connection.
	TLS *tls.Config
	// SASL, if not nil, authenticates them (KafkaSASL builds one).
	SASL sasl.Mechanism
	// MinBytes, MaxBytes, MaxWait shape fetches; they never change what
	// is delivered, only in what pieces.
	MinBytes, MaxBytes int
	MaxWait            time.Duration
	// MaxEventBytes: a larger value is delivered with Oversized set and
	// not decoded.
	MaxEventBytes int
	// BackoffMin and BackoffMax bound the retry backoff while a broker is
	// unreachable.
	BackoffMin, BackoffMax time.Duration
	// Logger receives connection trouble; nil discards it.
	Logger *slog.Logger

	// tr is the connection pool of the admin calls (metadata, offsets,
	// commits), made on first use and shared by copies made after it: a
	// pool per call would leave connections and goroutines behind at
	// every checkpoint of a days-long run. Not safe for concurrent first
	// use.
	tr *kafka.Transport

	_ struct{}
}

// Close drops the admin calls' idle connections.
func (c *KafkaConfig) Close() {
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
}

// KafkaTLS builds a TLS configuration from files; empty caFile means the
// system roots, empty certFile no client certificate.
func KafkaTLS(caFile, certFile, keyFile, serverName string, insecure bool) (*tls.Config, error) {
	c := &tls.Config{ServerName: serverName, InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("kafka tls ca_file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kafka tls ca_file %s: no PEM certificate in it", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("kafka tls cert_file/key_file: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// KafkaSASL builds a SASL mechanism: PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512 ("" is none, nil).
func KafkaSASL(mechanism, user, password string) (sasl.Mechanism, error) {
	switch mechanism {
	case "":
		return nil, nil
	case "PLAIN":
		return plain.Mechanism{Username: user, Password: password}, nil
	case "SCRAM-SHA-256":
		return scram.Mechanism(scram.SHA256, user, password)
	case "SCRAM-SHA-512":
		return scram.Mechanism(scram.SHA512, user, password)
	}
	return nil, fmt.Errorf("kafka sasl mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mechanism)
}

func (c *KafkaConfig) transport() *kafka.Transport {
	if c.tr == nil {
		c.tr = &kafka.Transport{TLS: c.TLS, SASL: c.SASL, ClientID: c.ClientID, DialTimeout: 5 * time.Second}
	}
	return c.tr
}

func (c *KafkaConfig) client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Transport: c.transport(), Timeout: 10 * time.Second}
}

func (c *KafkaConfig) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// KafkaPartitions returns the topic's partition count.
func KafkaPartitions(ctx context.Context, c *KafkaConfig) (int, error) {
	resp, err := c.client().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{c.Topic}})
	if err != nil {
		return 0, fmt.Errorf("kafka metadata of %s: %w", c.Topic, err)
	}
	for _, t := range resp.Topics {
		if t.Name != c.Topic {
			continue
		}
		if t.Error != nil {
			return 0, fmt.Errorf("kafka topic %s: %w", c.Topic, t.Error)
		}
		if len(t.Partitions) == 0 {
			return 0, fmt.Errorf("kafka topic %s has no partitions", c.Topic)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("kafka topic %s: not found", c.Topic)
}

// KafkaEndOffsets returns, per partition, the offset the next produced
// message will get (the high watermark), or the first offset if last is
// false.
func KafkaEndOffsets(ctx context.Context, c *KafkaConfig, partitions int, last bool) ([]int64, error) {
	reqs := make([]kafka.OffsetRequest, partitions)
	for p := range reqs {
		if last {
			reqs[p] = kafka.LastOffsetOf(p)
		} else {
			reqs[p] = kafka.FirstOffsetOf(p)
		}
	}
	resp, err := c.client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{c.Topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("kafka offsets of %s: %w", c.Topic, err)
	}
	out := make([]int64, partitions)
	for _, po := range resp.Topics[c.Topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("kafka offsets of %s partition %d: %w", c.Topic, po.Partition, po.Error)
		}
		if po.Partition < 0 || po.Partition >= partitions {
			continue
		}
		if last {
			out[po.Partition] = po.LastOffset
		} else {
			out[po.Partition] = po.FirstOffset
		}
	}
	return out, nil
}

// CommitOffsets records next[p] (the next offset to read) for every
// partition in consumer group group, as a member-less commit (generation
// -1), so lag tools see the checker's position.
func CommitOffsets(ctx context.Context, c *KafkaConfig, group string, next []int64) error {
	oc := make([]kafka.OffsetCommit, 0, len(next))
	for p, off := range next {
		if off >= 0 {
			oc = append(oc, kafka.OffsetCommit{Partition: p, Offset: off})
		}
	}
	resp, err := c.client().OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID: group, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{c.Topic: oc},
	})
	if err != nil {
		return fmt.Errorf("kafka commit offsets of group %s: %w", group, err)
	}
	var errs []error
	for _, ps := range resp.Topics {
		for _, p := range ps {
			if p.Error != nil {
				errs = append(errs, fmt.Errorf("kafka commit offset of %s partition %d: %w", c.Topic, p.Partition, p.Error))
			}
		}
	}
	return errors.Join(errs...)
}

// KafkaMessage is one message of the topic, decoded off the checking
// goroutine.
type KafkaMessage struct {
	Partition int
	Offset    int64
	// Value is the raw message value, kept for dead letters.
	Value []byte
	// Txn is the decoded event when Err is nil and Oversized is false.
	Txn history.Txn
	// Facts are the database's facts the event carried (commit_ts,
	// start_ts, xid, snapshot; NativeDecoder.Facts), zero when none.
	Facts history.Facts
	// Err is the decode error (undecodable or invalid event).
	Err error
	// Oversized: the value exceeds MaxEventBytes and was not decoded.
	Oversized bool
	// HighWaterMark is the partition's end offset when the message was
	// fetched: Offset+1 == HighWaterMark means nothing more was there.
	HighWaterMark int64
}

// Undecodable reports whether the value is not JSON at all (as opposed to
// a JSON value that is not a valid event).
func (m *KafkaMessage) Undecodable() bool { return m.Err != nil && !json.Valid(m.Value) }

// KafkaSource reads every partition of a topic, each in its own
// goroutine that fetches and decodes into a bounded queue; Messages
// delivers them in offset order within each partition, the partitions
// interleaved by event time (merger: the message with the smallest start
// first, and a partition that is behind with unread messages waited for).
// A broker that becomes unreachable is retried with backoff for ever; the
// trouble is logged and shown by Unreachable.
type KafkaSource struct {
	cfg     KafkaConfig
	out     chan KafkaMessage
	readers []*kafka.Reader
	merge   *merger
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	// decMu guards dec, which every partition's reader decodes with. One
	// intern table for all partitions: with a table per partition the
	// same key was 8 strings, so the engine's maps compared their bytes
	// instead of finding the same pointer (memeqbody went from 0.11 s to
	// 0.87 s of a 500K run) and 8 tables missed the cache where one hits
	// (the lookups 0.23 s -> 1.3 s). Decoding is a small part of a
	// reader's time, so the readers hardly wait for each other.
	decMu sync.Mutex
	dec   NativeDecoder

	unreachableSince atomic.Int64 // unix ns, 0 when fine
	lastErr          atomic.Value // string

	// logMu and closed keep kafka-go's goroutines from logging after
	// Close: a reader's lag reporter is not joined by its Close, and a
	// line written after Close returned raced with the caller's use of
	// the log (go test -race).
	logMu  sync.RWMutex
	closed bool
}

// kafkaLog adapts kafka-go's Printf logger to slog; its messages about
// errors also mark the source unreachable until the next message.
type kafkaLog struct {
	s     *KafkaSource
	l     *slog.Logger
	isErr bool
}

func (k kafkaLog) Printf(format string, args ...any) {
	k.s.logMu.RLock()
	defer k.s.logMu.RUnlock()
	if k.s.closed {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if k.isErr {
		k.s.trouble(msg)
		k.l.Warn("kafka: "+msg, "topic", k.s.cfg.Topic)
		return
	}
	k.l.Debug("kafka: "+msg, "topic", k.s.cfg.Topic)
}

func (s *KafkaSource) trouble(msg string) {
	s.lastErr.Store(msg)
	s.unreachableSince.CompareAndSwap(0, time.Now().UnixNano())
}

// NewKafkaSource starts reading: partition p from offset start[p] (an
// offset, kafka.FirstOffset or kafka.LastOffset). Stop with Close.
func NewKafkaSource(ctx context.Context, c KafkaConfig, start []int64) *KafkaSource {
	// The caller may go on to use start (run passes its next offsets and
	// advances them) while startOffsets reads it.
	start = slices.Clone(start)
	ctx, cancel := context.WithCancel(ctx)
	s := &KafkaSource{cfg: c, out: make(chan KafkaMessage, 4096), cancel: cancel}
	// A reader gets a fetch answered within MaxWait (kafka-go's read
	// deadline): one with unread messages still silent after two is
	// retrying a failed fetch, which its backoff bounds. On a loaded
	// machine with the in-process broker a reader failed 10 MB fetches for
	// 3.5 s in a row; waiting 1 s let the window buffer 73,000
	// transactions. Until the end offsets say whether a partition has
	// anything to read, it is waited for 2 x MaxWait (it may be empty).
	s.merge = newMerger(len(start), mergeQueue, s.out, max(2*c.MaxWait, 100*time.Millisecond),
		max(2*c.MaxWait, 100*time.Millisecond)+c.BackoffMax)
	s.wg.Go(func() { s.merge.run(ctx) })
	s.wg.Go(func() { s.startOffsets(ctx, start) })
	lg := c.logger()
	for p, off := range start {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:        c.Brokers,
			Topic:          c.Topic,
			Partition:      p,
			Dialer:         &kafka.Dialer{ClientID: c.ClientID, Timeout: 10 * time.Second, DualStack: true, TLS: c.TLS, SASLMechanism: c.SASL},
			MinBytes:       max(c.MinBytes, 1),
			MaxBytes:       max(c.MaxBytes, c.MinBytes, 1),
			MaxWait:        c.MaxWait,
			ReadBackoffMin: c.BackoffMin,
			ReadBackoffMax: c.BackoffMax,
			MaxAttempts:    3,
			Logger:         kafkaLog{s, lg, false},
			ErrorLogger:    kafkaLog{s, lg, true},
		})
		if err := r.SetOffset(off); err != nil {
			// Only a reader already started refuses; this one is new.
			panic(fmt.Sprintf("ingest: kafka SetOffset on a new reader: %v", err))
		}
		s.readers = append(s.readers, r)
		s.wg.Add(1)
		go s.read(ctx, p, r)
	}
	return s
}

// startOffsets tells the merger which partitions had messages to read at
// start: one with none is not waited for, one with some is waited for as
// long as a reader retrying a failed fetch takes. Without an answer (the
// broker is down) it stays unknown.
func (s *KafkaSource) startOffsets(ctx context.Context, start []int64) {
	c := s.cfg
	c.tr = nil // a pool of its own: the caller's is not safe for concurrent first use
	defer c.Close()
	backoff := max(s.cfg.BackoffMin, 10*time.Millisecond)
	for {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ends, err := KafkaEndOffsets(qctx, &c, len(start), true)
		cancel()
		if err == nil {
			for p, off := range start {
				switch {
				case off == kafka.LastOffset || off >= 0 && ends[p] <= off:
					s.merge.setStart(p, startEmpty)
				case off >= 0:
					s.merge.setStart(p, startUnread)
				}
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, max(s.cfg.BackoffMax, backoff))
	}
}

// Messages is the merged stream; it is closed after Close.
func (s *KafkaSource) Messages() <-chan KafkaMessage { return s.out }

// Unreachable returns since when fetching has been failing and the last
// error, or a zero time when it is fine.
func (s *KafkaSource) Unreachable() (time.Time, string) {
	ns := s.unreachableSince.Load()
	if ns == 0 {
		return time.Time{}, ""
	}
	msg, _ := s.lastErr.Load().(string)
	return time.Unix(0, ns), msg
}

func (s *KafkaSource) read(ctx context.Context, p int, r *kafka.Reader) {
	defer s.wg.Done()
	source := fmt.Sprintf("%s/%d", s.cfg.Topic, p)
	backoff := s.cfg.BackoffMin
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// kafka-go already retried; say so and keep trying.
			s.trouble(err.Error())
			s.cfg.logger().Warn("kafka: fetch failed, retrying", "topic", s.cfg.Topic, "partition", p, "backoff", backoff, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, s.cfg.BackoffMax)
			continue
		}
		backoff = s.cfg.BackoffMin
		if s.unreachableSince.Swap(0) != 0 {
			s.cfg.logger().Info("kafka: fetching again", "topic", s.cfg.Topic, "partition", p)
		}
		km := KafkaMessage{Partition: p, Offset: m.Offset, Value: m.Value, HighWaterMark: m.HighWaterMark}
		if s.cfg.MaxEventBytes > 0 && len(m.Value) > s.cfg.MaxEventBytes {
			km.Oversized = true
		} else {
			s.decMu.Lock()
			km.Txn, km.Err = s.dec.Decode(m.Value, history.Pos{Source: source, Offset: m.Offset})
			km.Facts = s.dec.Facts()
			s.decMu.Unlock()
		}
		if !s.merge.put(ctx, p, km) {
			return
		}
	}
}

// mergeQueue is each partition's queue ahead of the merger: enough to
// cover a reader's pause between fetches, small enough that partitions
// ahead in event time stop early (their readers block, then kafka-go's).
const mergeQueue = 512

// Close stops every reader and closes Messages.
func (s *KafkaSource) Close() error {
	s.cancel()
	// A reader's Close waits for its fetch in flight (up to MaxWait);
	// closing them one after another would add those waits up.
	errs := make([]error, len(s.readers))
	var cw sync.WaitGroup
	for i, r := range s.readers {
		cw.Go(func() { errs[i] = r.Close() })
	}
	cw.Wait()
	s.wg.Wait()
	close(s.out)
	s.logMu.Lock()
	s.closed = true
	s.logMu.Unlock()
	return errors.Join(errs...)
}

// KafkaWriter produces messages to one topic (dead letters, tests).
type KafkaWriter struct {
	w  *kafka.Writer
	tr *kafka.Transport
}

// NewKafkaWriter returns a synchronous writer: WriteMessages returns once
// the broker has acknowledged (all in-sync replicas).
func NewKafkaWriter(c *KafkaConfig, topic string) *KafkaWriter {
	tr := c.transport()
	return &KafkaWriter{tr: tr, w: &kafka.Writer{
		Addr:                   kafka.TCP(c.Brokers...),
		Topic:                  topic,
		Transport:              tr,
		RequiredAcks:           kafka.RequireAll,
		BatchTimeout:           5 * time.Millisecond,
		BatchSize:              1000,
		AllowAutoTopicCreation: true,
		Balancer:               &kafka.Hash{},
	}}
}

// Write sends values with their keys (nil keys allowed) and waits for the
// acknowledgement.
func (w *KafkaWriter) Write(ctx context.Context, keys, values [][]byte) error {
	msgs := make([]kafka.Message, len(values))
	for i, v := range values {
		msgs[i] = kafka.Message{Value: v}
		if keys != nil {
			msgs[i].Key = keys[i]
		}
	}
	return w.w.WriteMessages(ctx, msgs...)
}

// WritePartitioned sends each value to the partition given with it.
func (w *KafkaWriter) WritePartitioned(ctx context.Context, partitions []int, values [][]byte) error {
	msgs := make([]kafka.Message, len(values))
	for i, v := range values {
		msgs[i] = kafka.Message{Value: v, Partition: partitions[i]}
	}
	w.w.Balancer = kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition })
	return w.w.WriteMessages(ctx, msgs...)
}

// Close flushes and closes the writer and drops idle connections of the
// pool it shares with its config.
func (w *KafkaWriter) Close() error {
	err := w.w.Close()
	w.tr.CloseIdleConnections()
	return err
}

package ingest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

func newBroker(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func event(id string, start int64) []byte {
	return fmt.Appendf(nil, `{"session":"s","id":%q,"start":%d,"end":%d,"status":"committed","ops":[["w","x",1]]}`, id, start, start+5)
}

// TestKafkaSource: every partition is read from the offset asked for, in
// offset order, values decoded; bad values come with their error,
// oversized ones undecoded.
func TestKafkaSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	brokers := newBroker(t, kfake.SeedTopics(3, "txns"))
	cfg := KafkaConfig{Brokers: brokers, Topic: "txns", MaxEventBytes: 200, MaxWait: 50 * time.Millisecond,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
	n, err := KafkaPartitions(ctx, &cfg)
	if err != nil || n != 3 {
		t.Fatalf("partitions: %d %v", n, err)
	}
	w := NewKafkaWriter(&cfg, "txns")
	defer w.Close()
	var parts []int
	var vals [][]byte
	for p := range 3 {
		for i := range 5 {
			parts = append(parts, p)
			vals = append(vals, event(fmt.Sprintf("p%d-%d", p, i), int64(100*i)))
		}
	}
	parts = append(parts, 1, 2, 0)
	vals = append(vals, []byte("not json"), []byte(`{"session":"s","id":"nostatus","ops":[]}`), append([]byte(`{"pad":"`+strings.Repeat("x", 300)+`",`), event("big", 1)[1:]...))
	if err := w.WritePartitioned(ctx, parts, vals); err != nil {
		t.Fatal(err)
	}
	ends, err := KafkaEndOffsets(ctx, &cfg, 3, true)
	if err != nil || ends[0] != 6 || ends[1] != 6 || ends[2] != 6 {
		t.Fatalf("end offsets %v %v", ends, err)
	}
	// Partition 1 from offset 2: its first two messages are skipped.
	src := NewKafkaSource(ctx, cfg, []int64{kafka.FirstOffset, 2, 0})
	next := []int64{0, 2, 0}
	got := map[string]bool{}
	for total := 0; total < 16; total++ {
		var m KafkaMessage
		select {
		case m = <-src.Messages():
		case <-ctx.Done():
			t.Fatalf("timeout after %d messages", total)
		}
		if m.Offset != next[m.Partition] {
			t.Fatalf("partition %d: offset %d, want %d", m.Partition, m.Offset, next[m.Partition])
		}
		next[m.Partition]++
		switch {
		case m.Partition == 0 && m.Offset == 5:
			if !m.Oversized {
				t.Fatalf("value of %d bytes not flagged oversized", len(m.Value))
			}
		case m.Partition == 1 && m.Offset == 5:
			if m.Err == nil || !m.Undecodable() {
				t.Fatalf("not json: err %v undecodable %v", m.Err, m.Undecodable())
			}
		case m.Partition == 2 && m.Offset == 5:
			if m.Err == nil || m.Undecodable() || !strings.Contains(m.Err.Error(), "txns/2@5") {
				t.Fatalf("invalid event: err %v (want one naming txns/2@5), undecodable %v", m.Err, m.Undecodable())
			}
		default:
			if m.Err != nil {
				t.Fatal(m.Err)
			}
			got[m.Txn.ID] = true
		}
	}
	if len(got) != 13 || got["p1-0"] || got["p1-1"] || !got["p1-2"] {
		t.Fatalf("decoded %v", got)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CommitOffsets(ctx, &cfg, "checker", next); err != nil {
		t.Fatal(err)
	}
	resp, err := cfg.client().OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "checker", Topics: map[string][]int{"txns": {0, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics["txns"] {
		if p.CommittedOffset != 6 {
			t.Fatalf("committed offset of partition %d: %d, want 6", p.Partition, p.CommittedOffset)
		}
	}
}

// TestKafkaSASL reads through each SASL mechanism from a broker that
// requires it, and fails cleanly with a wrong password.
func TestKafkaSASL(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			brokers := newBroker(t, kfake.EnableSASL(), kfake.Superuser(mech, "checker", "secret"), kfake.SeedTopics(1, "txns"))
			m, err := KafkaSASL(mech, "checker", "secret")
			if err != nil {
				t.Fatal(err)
			}
			cfg := KafkaConfig{Brokers: brokers, Topic: "txns", SASL: m, MaxWait: 50 * time.Millisecond,
				BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
			w := NewKafkaWriter(&cfg, "txns")
			defer w.Close()
			if err := w.Write(ctx, nil, [][]byte{event("a", 1)}); err != nil {
				t.Fatal(err)
			}
			src := NewKafkaSource(ctx, cfg, []int64{kafka.FirstOffset})
			defer src.Close()
			select {
			case msg := <-src.Messages():
				if msg.Err != nil || msg.Txn.ID != "a" {
					t.Fatalf("got %+v", msg)
				}
			case <-ctx.Done():
				t.Fatal("timeout")
			}
			bad, _ := KafkaSASL(mech, "checker", "wrong")
			badCfg := KafkaConfig{Brokers: brokers, Topic: "txns", SASL: bad}
			if _, err := KafkaPartitions(ctx, &badCfg); err == nil {
				t.Fatal("wrong password accepted")
			}
		})
	}
	if _, err := KafkaSASL("MD5", "u", "p"); err == nil || !strings.Contains(err.Error(), "MD5") {
		t.Fatalf("unknown mechanism: %v", err)
	}
}

// TestKafkaTLS reads over TLS from a broker that speaks only TLS, with the
// CA given as a file the way the configuration gives it; without the CA
// the connection is refused.
func TestKafkaTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	brokers := newBroker(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{pair}}), kfake.SeedTopics(1, "txns"))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, certPEM, 0o600)
	tc, err := KafkaTLS(ca, "", "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := KafkaConfig{Brokers: brokers, Topic: "txns", TLS: tc, MaxWait: 50 * time.Millisecond,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
	w := NewKafkaWriter(&cfg, "txns")
	defer w.Close()
	if err := w.Write(ctx, nil, [][]byte{event("tls", 1)}); err != nil {
		t.Fatal(err)
	}
	src := NewKafkaSource(ctx, cfg, []int64{kafka.FirstOffset})
	defer src.Close()
	select {
	case m := <-src.Messages():
		if m.Err != nil || m.Txn.ID != "tls" {
			t.Fatalf("got %+v", m)
		}
	case <-ctx.Done():
		t.Fatal("timeout")
	}
	untrusted, _ := KafkaTLS("", "", "", "", false)
	badCfg := KafkaConfig{Brokers: brokers, Topic: "txns", TLS: untrusted}
	if _, err := KafkaPartitions(ctx, &badCfg); err == nil {
		t.Fatal("a broker certificate from an unknown CA was accepted")
	}
	if _, err := KafkaTLS(filepath.Join(t.TempDir(), "missing.pem"), "", "", "", false); err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Fatalf("missing CA file: %v", err)
	}
}

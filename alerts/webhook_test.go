package alerts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamcheck/streamcheck/internal/report"
)

// TestWebhookRetriedAndSigned: a receiver answering 500 twice, then 200.
// The dispatcher retries until it is accepted; every request carries the
// alert JSON and a signature the test verifies with crypto/hmac itself.
func TestWebhookRetriedAndSigned(t *testing.T) {
	secret := []byte("s3cret")
	var mu sync.Mutex
	var bodies [][]byte
	var sigs, ids []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, b)
		sigs = append(sigs, r.Header.Get("X-Streamcheck-Signature-256"))
		ids = append(ids, r.Header.Get("X-Streamcheck-Alert-Id"))
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			t.Errorf("%s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		if len(bodies) <= 2 {
			http.Error(w, "try later", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	sink, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hook", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(nil)
	d, err := NewDispatcher(DispatcherOptions{Sinks: []Sink{sink}, Metrics: m, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := lostUpdateAlert(t, "wh-1")
	if err := d.Enqueue(a, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("%d requests, want 3 (two 500s, one 204)", len(bodies))
	}
	for i, b := range bodies {
		mac := hmac.New(sha256.New, secret)
		mac.Write(b)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); sigs[i] != want {
			t.Errorf("request %d: signature %q, want %q", i, sigs[i], want)
		}
		if ids[i] != "wh-1" {
			t.Errorf("request %d: id header %q", i, ids[i])
		}
		var got report.Alert
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("request %d: body is not an alert: %v", i, err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("request %d: body decodes to %+v, want %+v", i, got, a)
		}
	}
	if !VerifySignature(secret, bodies[0], sigs[0]) || VerifySignature([]byte("other"), bodies[0], sigs[0]) {
		t.Error("VerifySignature disagrees with HMAC-SHA256")
	}
	if got := testutil.ToFloat64(m.SinkErrors.WithLabelValues("webhook")); got != 2 {
		t.Errorf("sink errors = %v, want 2", got)
	}
}

// TestWebhookUnsignedWithoutSecret: no secret, no signature header.
func TestWebhookUnsignedWithoutSecret(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header }))
	defer srv.Close()
	sink, err := NewWebhook(WebhookOptions{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Deliver(context.Background(), lostUpdateAlert(t, "u")); err != nil {
		t.Fatal(err)
	}
	h := <-got
	if _, ok := h["X-Streamcheck-Signature-256"]; ok || h.Get("Authorization") != "Bearer t" {
		t.Errorf("headers %v", h)
	}
}

func TestSinkOptionsRejected(t *testing.T) {
	if _, err := NewWebhook(WebhookOptions{URL: "ftp://x"}); err == nil {
		t.Error("webhook accepted ftp://x")
	}
	if _, err := NewAlertmanager(AlertmanagerOptions{URL: "127.0.0.1:9093"}); err == nil {
		t.Error("alertmanager accepted a URL without scheme")
	}
	if _, err := NewAlertmanager(AlertmanagerOptions{URL: "http://a:1", Hold: -time.Second}); err == nil {
		t.Error("alertmanager accepted a negative hold")
	}
	if _, err := NewKafka(KafkaOptions{Topic: "t"}); err == nil {
		t.Error("kafka accepted no brokers")
	}
	if _, err := NewDispatcher(DispatcherOptions{Sinks: []Sink{NewJSONLines("x", io.Discard), NewJSONLines("x", io.Discard)}}); err == nil {
		t.Error("dispatcher accepted two sinks named x")
	}
}

package alerts

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/streamcheck/streamcheck/verdict"
)

// Webhook header names. The body is the alert as JSON (MarshalAlert).
const (
	// SignatureHeader carries "sha256=" and the lower-case hex HMAC-SHA256
	// of the exact request body under the shared secret, as GitHub signs
	// its webhooks; absent when no secret is configured. A receiver
	// recomputes it over the raw body and compares in constant time
	// (VerifySignature).
	SignatureHeader = "X-Streamcheck-Signature-256"
	// IDHeader repeats the alert id so that a receiver can deduplicate
	// redeliveries without parsing the body.
	IDHeader = "X-Streamcheck-Alert-Id"
)

// WebhookOptions configure a webhook sink.
type WebhookOptions struct {
	URL string
	// Secret, when set, signs every body (SignatureHeader).
	Secret []byte
	// Header is added to every request (an Authorization header, say).
	Header http.Header
	// Client defaults to a client with a 10 s timeout.
	Client *http.Client
	// Name defaults to "webhook".
	Name string
	_    struct{}
}

// Webhook posts each alert's JSON to a URL. Any 2xx answer is a delivery;
// anything else, including a redirect, is retried.
type Webhook struct{ opts WebhookOptions }

// NewWebhook checks the options and returns the sink.
func NewWebhook(opts WebhookOptions) (*Webhook, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("alerts: webhook url %q: want http(s)://host/path", opts.URL)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{
			Timeout: 10 * time.Second,
			// A redirect would resend the body elsewhere, signature
			// included; the operator should configure the final URL.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if opts.Name == "" {
		opts.Name = "webhook"
	}
	return &Webhook{opts: opts}, nil
}

// Name implements Sink.
func (s *Webhook) Name() string { return s.opts.Name }

// Deliver implements Sink.
func (s *Webhook) Deliver(ctx context.Context, a verdict.Alert) error {
	body, err := MarshalAlert(a)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("alerts: webhook: %w", err)
	}
	for k, vs := range s.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(IDHeader, a.ID)
	if len(s.opts.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(s.opts.Secret, body))
	}
	return do(s.opts.Client, req, s.opts.Name)
}

// Sign returns the SignatureHeader value of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature reports whether header is body's signature under
// secret, comparing in constant time.
func VerifySignature(secret, body []byte, header string) bool {
	return hmac.Equal([]byte(header), []byte(Sign(secret, body)))
}

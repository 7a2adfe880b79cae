package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestExampleIsDefault holds config.example.yaml to Default: every option
// is in it, at its default.
func TestExampleIsDefault(t *testing.T) {
	c, err := Load(filepath.Join("..", "..", "config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Fatalf("config.example.yaml differs from Default():\n%+v\n%+v", c, Default())
	}
	// Every option appears: a key missing from the example would still
	// decode to its default, so count them.
	b, _ := os.ReadFile(filepath.Join("..", "..", "config.example.yaml"))
	for _, key := range yamlKeys(reflect.TypeOf(Config{})) {
		if !strings.Contains(string(b), key+":") {
			t.Errorf("config.example.yaml does not document %s", key)
		}
	}
}

func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		out = append(out, tag)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, yamlKeys(f.Type)...)
		}
	}
	return out
}

func TestUnknownKeyNamed(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"source: kafka\nkafka:\n  topic: t\n  brokerz: [a]\n", `line 4: field brokerz is not an option in kafka`},
		{"sorce: x\n", `line 1: field sorce is not an option at the top level`},
		{"state:\n  retention:\n    max_agee: 1h\n", `field max_agee is not an option in state.retention`},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

func TestBadValues(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"check:\n  lateness: soon\n", `line 2: "soon" is not a duration`},
		{"kafka:\n  max_event_bytes: lots\n", `line 2: "lots" is not a byte size`},
		{"check:\n  tick: 0\n", "check.tick"},
		{"source: kafka\nkafka:\n  topic: t\n  sasl:\n    mechanism: MD5\n", "kafka.sasl.mechanism"},
		{"source: kafka\n", "kafka.topic"},
		{"dead_letter:\n  topic: dl\n", "dead_letter.topic"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

func TestValues(t *testing.T) {
	c, err := Parse([]byte("source: kafka\nkafka:\n  topic: t\n  max_fetch_bytes: 2MiB\ncheck:\n  lateness: 1500\n  indoubt: none\n  skew: 1ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kafka.MaxFetchBytes != 2<<20 || c.Check.Lateness != 1500 || c.Check.InDoubt != -1 || c.Check.Skew != Duration(time.Millisecond) {
		t.Fatalf("parsed %+v %+v", c.Kafka, c.Check)
	}
	if c.Kafka.Brokers[0] != "localhost:9092" {
		t.Fatal("defaults not kept under a partial section")
	}
}

func TestAlertSinks(t *testing.T) {
	c, err := Parse([]byte("http:\n  addr: \"\"\nalerts:\n  stdout: false\n  alertmanager:\n    url: http://am:9093\n    hold: 1h\n  webhooks:\n    - url: http://a/x\n      secret_env: S\n      headers: {X-A: b}\n    - url: http://b/y\n  kafka:\n    topic: alerts\n    brokers: [k:9092]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Alerts
	if c.HTTP.Addr != "" || a.Stdout || a.Alertmanager.URL != "http://am:9093" || a.Alertmanager.Hold != Duration(time.Hour) ||
		len(a.Webhooks) != 2 || a.Webhooks[0].Headers["X-A"] != "b" || a.Webhooks[0].SecretEnv != "S" || a.Kafka.Topic != "alerts" {
		t.Fatalf("parsed %+v %+v", c.HTTP, a)
	}
	if a.BackoffMin != Default().Alerts.BackoffMin {
		t.Fatal("defaults not kept under a partial alerts section")
	}
	for _, c := range []struct{ yaml, want string }{
		{"alerts:\n  webhooks:\n    - secret_env: S\n", "alerts.webhooks[0].url"},
		{"alerts:\n  webhooks:\n    - url: x\n      secet_env: S\n", "is not an option in alerts.webhooks"},
		{"alerts:\n  backoff_min: 2m\n", "alerts.backoff_min/max"},
		{"alerts:\n  alertmanager:\n    url: http://a\n    hold: 0s\n", "alerts.alertmanager.hold"},
		{"alerts:\n  kafka:\n    topic: a\n", "alerts.kafka.brokers"},
		{"htp:\n  addr: x\n", "field htp is not an option at the top level"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

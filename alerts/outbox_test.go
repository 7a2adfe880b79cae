package alerts

import (
	"reflect"
	"testing"
)

// TestMemOutboxContract pins the Outbox contract the Pebble store must
// also meet: oldest first, removal when the last sink is done, Put of an
// existing id replaces it and moves it to the end, Done is idempotent.
func TestMemOutboxContract(t *testing.T) {
	o := NewMemOutbox()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(o.Put("a", []byte("A"), []string{"s2", "s1"}))
	must(o.Put("b", []byte("B"), []string{"s1"}))
	must(o.Put("c", []byte("C"), []string{"s1", "s2"}))
	must(o.Done("a", "s1"))
	must(o.Done("b", "s1"))
	must(o.Done("b", "s1"))
	must(o.Done("zzz", "s1"))
	p, err := o.Pending()
	must(err)
	want := []OutboxEntry{{"a", []byte("A"), []string{"s2"}}, {"c", []byte("C"), []string{"s1", "s2"}}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("pending = %+v, want %+v", p, want)
	}
	must(o.Put("a", []byte("A2"), []string{"s1"}))
	p, _ = o.Pending()
	want = []OutboxEntry{{"c", []byte("C"), []string{"s1", "s2"}}, {"a", []byte("A2"), []string{"s1"}}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("after re-put: pending = %+v, want %+v", p, want)
	}
	// Pending returns copies: changing them changes nothing stored.
	p[0].Payload[0] = 'X'
	p[0].Sinks[0] = "zz"
	q, _ := o.Pending()
	if string(q[0].Payload) != "C" || q[0].Sinks[0] != "s1" {
		t.Errorf("Pending leaked its storage: %+v", q)
	}
	if err := o.Put("", nil, []string{"s"}); err == nil {
		t.Error("empty id accepted")
	}
}

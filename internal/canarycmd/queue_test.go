package canarycmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// The queue keeps write order, and Close returns only once everything
// reached the reader.
func TestLineQueueOrder(t *testing.T) {
	pr, pw := io.Pipe()
	var got bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&got, pr); close(read) }()
	q := newLineQueue(pw, 8)
	var want strings.Builder
	for i := 0; i < 5000; i++ {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := q.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	<-read
	if got.String() != want.String() {
		t.Fatal("lines lost or reordered")
	}
	if _, err := q.Write([]byte("late\n")); err == nil {
		t.Fatal("write after Close succeeded")
	}
}

// A reader that stops (the checker failed) turns writes into errors; no
// writer blocks forever on a full queue.
func TestLineQueueDeadReader(t *testing.T) {
	pr, pw := io.Pipe()
	stop := errors.New("checker stopped")
	pr.CloseWithError(stop)
	q := newLineQueue(pw, 4)
	done := make(chan error)
	go func() {
		var err error
		for i := 0; i < 100000 && err == nil; i++ {
			_, err = q.Write([]byte("x\n"))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, stop) {
			t.Fatalf("write error %v, want %v", err, stop)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writer blocked on a dead reader")
	}
	if err := q.Close(); !errors.Is(err, stop) {
		t.Fatalf("Close: %v", err)
	}
}

// alertWatch counts first alerts (not updates), calls onFirst once, and
// times the first from its core's last end.
func TestAlertWatch(t *testing.T) {
	var out bytes.Buffer
	firsts := 0
	start := time.Now().Add(-time.Second)
	w := &alertWatch{w: &out, start: start, onFirst: func() { firsts++ }}
	end := time.Now().Add(-200 * time.Millisecond).UnixNano()
	lines := fmt.Sprintf(`{"id":"a","updated":false,"txns":[{"end":%d},{"end":%d}]}`+"\n"+
		`{"id":"a","updated":true,"txns":[]}`+"\n", end-5e8, end)
	// Split mid-line: the watch must not depend on one write per line.
	w.Write([]byte(lines[:10]))
	w.Write([]byte(lines[10:]))
	w.Write([]byte(`{"id":"b","updated":false,"txns":[]}` + "\n"))
	n, after, latency := w.stats()
	if n != 2 || firsts != 1 {
		t.Fatalf("%d alerts, onFirst called %d times; want 2 and 1", n, firsts)
	}
	if after < time.Second || latency < 200*time.Millisecond || latency > 10*time.Second {
		t.Fatalf("after %s, latency %s", after, latency)
	}
	if out.String() != lines+`{"id":"b","updated":false,"txns":[]}`+"\n" {
		t.Fatalf("forwarded %q", out.String())
	}
}

// lineQueue is a queue of byte lines to a writer: the generic queue that
// feeds the checker, driven here with lines so its tests read simply.
type lineQueue struct{ *queue[[]byte] }

func newLineQueue(w io.WriteCloser, size int) *lineQueue {
	return &lineQueue{newQueue(size, func(b []byte) error {
		_, err := w.Write(b)
		return err
	}, func() { w.Close() })}
}

// Write queues a copy of p.
func (q *lineQueue) Write(p []byte) (int, error) {
	if err := q.put(bytes.Clone(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

package runcmd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// message is one event of any source, decoded off the checking goroutine.
type message struct {
	part int
	// offset identifies the message in its partition (Kafka offset, or
	// the line's byte offset in a file); next is where to resume after it.
	offset, next int64
	line         int // file line, 0 for Kafka
	value        []byte
	txn          history.Txn
	facts        history.Facts // the database's facts (run --stamps)
	err          error
	oversized    bool
	// size is an oversized line's length (value holds only its first
	// maxDeadEvent bytes); 0 otherwise.
	size int64
	// end: the input ended (stdin or a file without follow).
	end bool
}

// source delivers messages until ctx ends or the input does, in batches
// (in order; the end of the input is the last message of its batch): one
// channel send per batch instead of per event, which cost a select, a copy
// of the message and often a goroutine wakeup on each side. A source sends
// what it has whenever it would otherwise wait, so batching never holds a
// message back (see lineSource.read; docs/SEMANTICS.md §5 "Events read in
// batches (issue 29)").
type source interface {
	messages() <-chan *batch
	// recycle takes back a batch the loop has handled whole, for the
	// source to fill again (nothing of it may be kept: a message's value
	// and txn are dead once handled).
	recycle(b *batch)
	// unreachable reports since when the source has been failing and
	// why (zero time: fine).
	unreachable() (time.Time, string)
	close() error
}

// lineSource reads native events line by line from stdin or a file,
// following the file's growth when follow is set.
type lineSource struct {
	out    chan *batch
	free   chan *batch
	cancel context.CancelFunc
	done   chan struct{}
	f      *os.File
}

func newLineSource(ctx context.Context, name string, r io.Reader, follow bool, poll time.Duration, offset int64, line int, maxEvent int) (*lineSource, error) {
	s := &lineSource{out: make(chan *batch, batchQueue), free: make(chan *batch, batchQueue+2), done: make(chan struct{})}
	if r == nil {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		if offset > 0 {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				f.Close()
				return nil, fmt.Errorf("resume %s at byte %d: %w", name, offset, err)
			}
		}
		s.f, r = f, f
	}
	ctx, s.cancel = context.WithCancel(ctx)
	if maxEvent <= 0 {
		maxEvent = math.MaxInt32
	}
	go s.read(ctx, name, r, follow, poll, offset, line, maxEvent)
	return s, nil
}

// read sends one message per line. A line longer than maxEvent bytes
// (its line end aside: Kafka's limit counts the value) is sent as
// oversized with its line number, offset, length and first maxDeadEvent
// bytes, without being decoded: memory holds at most maxEvent bytes of a
// line besides the reader's buffer, however long the line (a line of
// gigabytes without a newline was read whole).
func (s *lineSource) read(ctx context.Context, name string, r io.Reader, follow bool, poll time.Duration, offset int64, line int, maxEvent int) {
	defer close(s.done)
	var dec ingest.NativeDecoder
	br := bufio.NewReaderSize(r, 1<<20)
	// pending holds the line so far, or, once it is over maxEvent for
	// sure (over), its first maxDeadEvent bytes; lineLen counts all its
	// bytes and last its last two, for its line end.
	var pending []byte
	var lineLen int64
	var last [2]byte
	over := false
	// cur is the batch being filled: the messages read and not sent
	// yet, and their values in one array instead of a copy of each.
	var cur *batch
	flush := func() bool {
		if cur == nil || len(cur.msgs) == 0 {
			return true
		}
		b := cur
		cur = nil
		select {
		case s.out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	fill := func() {
		if cur == nil {
			select {
			case cur = <-s.free:
			default:
				cur = &batch{msgs: make([]message, 0, maxBatch), bytes: make([]byte, 0, batchBytes)}
			}
		}
	}
	// send queues m; a full batch, or the end of the input, goes out.
	send := func(m message) bool {
		fill()
		cur.msgs = append(cur.msgs, m)
		if m.end || len(cur.msgs) == maxBatch || len(cur.bytes) >= maxBatchBytes {
			return flush()
		}
		return true
	}
	// keep copies a line's text into the batch's bytes. The slice is
	// capped: a later line appended never writes into it, and one that
	// moves the array leaves it where it was, unchanged.
	keep := func(text []byte) []byte {
		fill()
		at := len(cur.bytes)
		cur.bytes = append(cur.bytes, text...)
		return cur.bytes[at:len(cur.bytes):len(cur.bytes)]
	}
	// lineBuffered says a whole line is in br's buffer, so that reading
	// it will not wait for the input. Before waiting, the batch goes out:
	// on a live stream no event waits for later ones (the loop's idle
	// release and latency see each event when it arrived).
	lineBuffered := func() bool {
		buf, _ := br.Peek(br.Buffered())
		return bytes.IndexByte(buf, '\n') >= 0
	}
	if !follow {
		// Standard input may be gzipped: check detects gzip by its magic
		// bytes, and run at the end of stdin exits as check would on the
		// same bytes. (stdin cannot be resumed, so offsets into the
		// decompressed stream are fine.) Peeked here, off the loop, so a
		// pipe that is slow to start does not hold up the start.
		if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(br)
			if err != nil {
				send(message{end: true, err: fmt.Errorf("%s: gzip: %w", name, err)})
				return
			}
			defer zr.Close()
			br = bufio.NewReaderSize(zr, 1<<20)
		}
		if readElle(name, br, send) {
			return
		}
	}
	emit := func() bool {
		start := offset
		offset += lineLen
		line++
		size := lineLen
		if last[1] == '\n' {
			size--
			if last[0] == '\r' && size > 0 {
				size--
			}
		}
		raw, wasOver := pending, over
		pending, lineLen, last, over = pending[:0], 0, [2]byte{}, false
		if wasOver || size > int64(maxEvent) {
			m := message{offset: start, next: offset, line: line, oversized: true, size: size,
				value: bytes.Clone(raw[:min(len(raw), maxDeadEvent)])}
			return send(m)
		}
		text := bytes.TrimSpace(raw)
		if start == 0 {
			// A UTF-8 byte order mark before the first event, which check
			// skips too (ingest.ReadHistory): the same bytes must not be
			// an input error for one command and not the other.
			text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
		}
		if len(text) == 0 {
			return true
		}
		m := message{offset: start, next: offset, line: line, value: keep(text)}
		m.txn, m.err = dec.Decode(text, history.Pos{Source: name, Line: line, Offset: start})
		m.facts = dec.Facts()
		return send(m)
	}
	add := func(chunk []byte) {
		lineLen += int64(len(chunk))
		for _, c := range chunk[max(len(chunk)-2, 0):] {
			last[0], last[1] = last[1], c
		}
		if over {
			if room := maxDeadEvent - len(pending); room > 0 {
				pending = append(pending, chunk[:min(room, len(chunk))]...)
			}
			return
		}
		if len(pending)+len(chunk) > maxEvent+2 {
			// Too long whatever its line end: keep its start for the
			// dead letter and drop the rest as it comes.
			over = true
			pending = append(pending, chunk[:min(len(chunk), max(maxDeadEvent-len(pending), 0))]...)
			pending = pending[:min(len(pending), maxDeadEvent)]
			return
		}
		pending = append(pending, chunk...)
	}
	for {
		if cur != nil && len(cur.msgs) > 0 && !lineBuffered() && !flush() {
			return
		}
		chunk, err := br.ReadSlice('\n')
		add(chunk)
		switch {
		case err == nil:
			if !emit() {
				return
			}
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !follow {
				if (over || len(bytes.TrimSpace(pending)) > 0) && !emit() {
					return
				}
				send(message{end: true})
				return
			}
			// Follow: a partial last line waits for its newline.
			if !flush() {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(poll):
			}
		default:
			send(message{end: true, err: err})
			return
		}
	}
}

// readElle reads a Jepsen/Elle history (EDN or JSON) on standard input
// whole, as check does, and sends its transactions; it reports whether
// the input was one. A native stream is left to the line reader. Elle
// operations pair invocations with completions across the history, so
// there is no reading it event by event; an error in it is an input error
// for the whole history, as in check (nothing of it is checked, exit 2).
func readElle(name string, br *bufio.Reader, send func(message) bool) bool {
	head := bytes.TrimPrefix(firstLine(br), []byte("\xef\xbb\xbf"))
	// Only "native or not" matters here (ReadHistory detects again, on
	// all it needs): detection says native only for an input starting
	// with '{' whose first object has "ops", and a native first object is
	// the first line.
	if f, err := ingest.DetectFormat(head); err != nil || f == ingest.FormatNative {
		return false
	}
	h, _, err := ingest.ReadHistory(br, name)
	if err != nil {
		send(message{end: true, err: err})
		return true
	}
	for i := range h.Txns {
		t := h.Txns[i]
		m := message{offset: int64(i), next: int64(i + 1), line: t.Pos.Line, txn: t}
		m.value = ingest.AppendNative(nil, &t)
		if !send(m) {
			return true
		}
	}
	send(message{end: true})
	return true
}

// firstLine returns the buffered input up to the end of its first
// non-blank line (or all of it at the end of the input, or 64 KB, as much
// as check's detection looks at), waiting for no more than that: on a
// live stream (canary | run) the first event must not wait for 64 KB of
// later ones.
func firstLine(br *bufio.Reader) []byte {
	const limit = 64 << 10
	for n := 1; ; {
		if _, err := br.Peek(n); err != nil {
			buf, _ := br.Peek(br.Buffered())
			return buf // the end of the input, or an error the reader sees next
		}
		buf, _ := br.Peek(min(br.Buffered(), limit)) // what has arrived costs nothing more
		if t := bytes.TrimLeft(buf, " \t\r\n"); bytes.IndexByte(t, '\n') >= 0 || len(buf) >= limit {
			return buf
		}
		n = len(buf) + 1
	}
}

// Batches (source): at most maxBatch messages, and a batch's bytes stop
// growing past maxBatchBytes; batchQueue batches wait at most, as many
// messages as the unbatched channel held.
const (
	maxBatch      = 256
	batchQueue    = 4
	batchBytes    = 64 << 10
	maxBatchBytes = 256 << 10
)

// batch is what a source sends at once: messages, in order, and for a
// line source the array their values are in.
type batch struct {
	msgs  []message
	bytes []byte
}

func (s *lineSource) messages() <-chan *batch { return s.out }

// recycle: the batch's messages are cleared (what they pointed to is
// free) and its arrays filled again by the reader; an array a long line
// grew past maxBatchBytes is left to the collector.
func (s *lineSource) recycle(b *batch) {
	if cap(b.bytes) > 2*maxBatchBytes {
		return
	}
	clear(b.msgs)
	b.msgs, b.bytes = b.msgs[:0], b.bytes[:0]
	select {
	case s.free <- b:
	default:
	}
}
func (s *lineSource) unreachable() (time.Time, string) { return time.Time{}, "" }
func (s *lineSource) close() error {
	s.cancel()
	// A read from stdin cannot be interrupted; do not wait for it.
	if s.f != nil {
		<-s.done
		return s.f.Close()
	}
	return nil
}

// kafkaSource adapts ingest.KafkaSource.
type kafkaSource struct {
	src  *ingest.KafkaSource
	out  chan *batch
	done chan struct{}
}

func newKafkaSource(ctx context.Context, cfg ingest.KafkaConfig, start []int64) *kafkaSource {
	s := &kafkaSource{src: ingest.NewKafkaSource(ctx, cfg, start), out: make(chan *batch, batchQueue), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.out)
		in := s.src.Messages()
		conv := func(km ingest.KafkaMessage) message {
			return message{part: km.Partition, offset: km.Offset, next: km.Offset + 1, value: km.Value, txn: km.Txn, facts: km.Facts, err: km.Err, oversized: km.Oversized}
		}
		for km := range in {
			// A batch is what has arrived: the first message, and the
			// ones already waiting behind it (never waiting for more).
			b := append(make([]message, 0, maxBatch), conv(km))
			open := true
		more:
			for open && len(b) < maxBatch {
				select {
				case km, ok := <-in:
					if !ok {
						open = false
						break more
					}
					b = append(b, conv(km))
				default:
					break more
				}
			}
			s.out <- &batch{msgs: b}
			if !open {
				return
			}
		}
	}()
	return s
}

func (s *kafkaSource) messages() <-chan *batch          { return s.out }
func (s *kafkaSource) recycle(*batch)                   {}
func (s *kafkaSource) unreachable() (time.Time, string) { return s.src.Unreachable() }
func (s *kafkaSource) close() error {
	// Drain so the forwarding goroutine can see Messages close.
	go func() {
		for range s.out {
		}
	}()
	err := s.src.Close()
	<-s.done
	return err
}

// txnSource delivers transactions already decoded by the caller (the
// canary's recorder, in process) as if they were lines of stdin: the nth
// is line n, so positions, dead letters and the exit at the end read as
// they did when the same transactions came through a JSON pipe, without
// encoding and decoding each one on the way to the engine. The channel's
// close is the end of the input.
type txnSource struct {
	out    chan *batch
	cancel context.CancelFunc
	done   chan struct{}
}

func newTxnSource(ctx context.Context, name string, in <-chan history.Txn) *txnSource {
	s := &txnSource{out: make(chan *batch, batchQueue), done: make(chan struct{})}
	ctx, s.cancel = context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		var pend []message
		flush := func() bool {
			if len(pend) == 0 {
				return true
			}
			b := pend
			pend = nil
			select {
			case s.out <- &batch{msgs: b}:
				return true
			case <-ctx.Done():
				return false
			}
		}
		send := func(m message) bool {
			if pend == nil {
				pend = make([]message, 0, maxBatch)
			}
			pend = append(pend, m)
			if m.end || len(pend) == maxBatch {
				return flush()
			}
			return true
		}
		line := 0
		for {
			var t history.Txn
			var ok bool
			select {
			case t, ok = <-in:
			default:
				// Nothing waiting: what was taken goes out before
				// waiting (batching never holds a message back).
				if !flush() {
					return
				}
				select {
				case t, ok = <-in:
				case <-ctx.Done():
					return
				}
			}
			if !ok {
				send(message{end: true})
				return
			}
			line++
			// The offset only orders the messages (stdin is never resumed);
			// the line is what positions and dead letters name.
			t.Pos = history.Pos{Source: name, Line: line}
			m := message{offset: int64(line - 1), next: int64(line), line: line, txn: t}
			if !send(m) {
				return
			}
		}
	}()
	return s
}

func (s *txnSource) messages() <-chan *batch          { return s.out }
func (s *txnSource) recycle(*batch)                   {}
func (s *txnSource) unreachable() (time.Time, string) { return time.Time{}, "" }
func (s *txnSource) close() error {
	s.cancel()
	<-s.done
	return nil
}

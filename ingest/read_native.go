package ingest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/streamcheck/streamcheck/history"
)

// parallelMin is the input size below which a history is decoded on one
// goroutine: splitting costs more than it saves on small inputs.
const parallelMin = 1 << 20

// readNativeAll decodes a whole JSON Lines history held in memory. Lines
// are independent, so the input is cut at newlines into one chunk per
// processor and the chunks decode in parallel; reading is a third of
// `check`'s time on large histories otherwise. Positions and the error
// reported are those of a sequential read: the first bad line wins.
func readNativeAll(all []byte, source string, st *Stats) (*history.History, error) {
	parts := min(runtime.GOMAXPROCS(0), 8)
	if len(all) < parallelMin {
		parts = 1
	}
	bounds := []int{0}
	for i := 1; i < parts; i++ {
		at := len(all) * i / parts
		if at <= bounds[len(bounds)-1] {
			continue
		}
		nl := bytes.IndexByte(all[at:], '\n')
		if nl < 0 || at+nl+1 >= len(all) {
			break
		}
		bounds = append(bounds, at+nl+1)
	}
	bounds = append(bounds, len(all))
	chunks := make([]nativeChunk, len(bounds)-1)
	line := 1
	for i := range chunks {
		c := &chunks[i]
		c.data, c.firstLine, c.offset = all[bounds[i]:bounds[i+1]], line, int64(bounds[i])
		c.lines = bytes.Count(c.data, []byte{'\n'})
		line += c.lines
	}
	// The chunks decode into windows of one slice, the history's: each
	// chunk's lines (and one more for the last chunk, whose last line may
	// have no newline) are at most its transactions, so the windows meet
	// and the history is in place when no line was blank. At 1M
	// transactions a second slice and the copy into it were an eighth of
	// the decoding and a few hundred MB touched once.
	total := 1
	for i := range chunks {
		total += chunks[i].lines
	}
	txns := make([]history.Txn, total)
	base := 0
	for i := range chunks {
		c := &chunks[i]
		n := c.lines
		if i == len(chunks)-1 {
			n++
		}
		c.txns = txns[base : base : base+n]
		base += n
	}
	var wg sync.WaitGroup
	for i := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chunks[i].decode(source)
		}()
	}
	wg.Wait()
	n := 0
	for i := range chunks {
		if chunks[i].err != nil {
			return nil, chunks[i].err
		}
		n += len(chunks[i].txns)
	}
	h := &history.History{Txns: txns[:0]}
	for i := range chunks {
		st.Records += chunks[i].records
		if chunks[i].facts != nil {
			// The side table exists once any line carried a fact; the
			// chunks before this one carried none.
			if h.Facts == nil {
				h.Facts = make([]history.Facts, len(h.Txns), n)
			}
			h.Facts = append(h.Facts, chunks[i].facts...)
		} else if h.Facts != nil {
			h.Facts = append(h.Facts, make([]history.Facts, len(chunks[i].txns))...)
		}
		// In place unless blank lines left a gap before it: then moved
		// down (never past a later chunk's window, which starts at or
		// after this one's).
		if c := chunks[i].txns; len(c) > 0 && &c[0] != &txns[len(h.Txns)] {
			copy(txns[len(h.Txns):], c)
		}
		h.Txns = txns[:len(h.Txns)+len(chunks[i].txns)]
		chunks[i].txns, chunks[i].facts = nil, nil
	}
	// The slots past the last transaction (blank lines) hold nothing
	// the history keeps: cleared, so that moved bodies are not pinned.
	clear(txns[len(h.Txns):])
	h.Txns = h.Txns[:len(h.Txns):len(h.Txns)]
	st.Txns = len(h.Txns)
	return h, nil
}

type nativeChunk struct {
	data      []byte
	firstLine int
	lines     int
	offset    int64

	txns []history.Txn
	// facts is parallel to txns once a line of the chunk carried a
	// database fact, nil before (history.History.Facts).
	facts   []history.Facts
	records int
	err     error
}

func (c *nativeChunk) decode(source string) {
	d := NativeDecoder{batch: true}
	// c.txns is the chunk's window of the history (readNativeAll).
	rest, off := c.data, c.offset
	for line := c.firstLine; len(rest) > 0; line++ {
		b := rest
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			b = rest[:nl+1]
		}
		rest = rest[len(b):]
		if !blank(b) {
			c.records++
			t, err := d.Decode(b, history.Pos{Source: source, Line: line, Offset: off})
			if err != nil {
				c.err = err
				return
			}
			if f := d.Facts(); f.Has != 0 && c.facts == nil {
				c.facts = make([]history.Facts, len(c.txns), cap(c.txns))
			}
			if c.facts != nil {
				c.facts = append(c.facts, d.Facts())
			}
			c.txns = append(c.txns, t)
		}
		off += int64(len(b))
	}
}

// sizeHint is the input's size when it is a regular file, so that it is
// read into one allocation instead of a doubling series of copies.
func sizeHint(r io.Reader) int {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return int(fi.Size())
}

// readAll reads what remains of br. hint is the expected size (0: unknown);
// the buffer's own read-ahead is part of it.
func readAll(br *bufio.Reader, hint int) ([]byte, error) {
	var buf bytes.Buffer
	if hint > 0 {
		buf.Grow(hint + bytes.MinRead)
	}
	_, err := buf.ReadFrom(br)
	return buf.Bytes(), err
}
